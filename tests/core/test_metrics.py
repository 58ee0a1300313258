"""/metrics (core.metrics): Prometheus exposition whose figures follow real actions, who may read
it, a constant query count, and prometheus-client's multiprocess mode across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from core.agents.engines.fake import FakeEngine, FakeReply
from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.capabilities import CapabilityContext, Tier, capability, registry
from core.metrics import register_collector
from core.models import AgentRun, DispatchIntent
from core.tokens import api_token_create
from sentinel.models import Alarm
from sentinel.services import sentinel_scan
from tests.sentinel.factories import make_cell, make_signal
from workorders.models import WorkOrder

ROOT = Path(__file__).resolve().parents[2]
REMOTE = "10.20.30.40"  # outside the default allowed network (127.0.0.1/32)
FAMILIES = (
    "aria_ingest_samples",
    "aria_ingest_lag_seconds",
    "aria_sentinel_scan_seconds",
    "aria_alarms",
    "aria_work_orders",
    "aria_agent_runs",
    "aria_agent_run_seconds",
    "aria_agent_tokens",
    "aria_agent_tool_call_seconds",
    "aria_agent_tool_call_errors",
    "aria_websocket_clients",
    "aria_dispatch_outbox_pending",
    "aria_dispatch_outbox_failing",
    "aria_dispatch_outbox_oldest_seconds",
    "aria_events_published",
    "aria_metrics_collector_up",
)


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    """{(sample name, labels): value} of an exposition."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def token_of(db):
    def issue(user) -> dict[str, str]:
        _, raw = api_token_create(user=user, name="prometheus")
        return {"HTTP_AUTHORIZATION": f"Bearer {raw}", "REMOTE_ADDR": REMOTE}

    return issue


@pytest.fixture
def scrape(client, admin_user, token_of):
    headers = token_of(admin_user)

    def read() -> dict:
        response = client.get("/metrics", **headers)
        assert response.status_code == 200, response.content
        return parse(response.content.decode())

    return read


@pytest.fixture
def hot_signal(db):
    return make_signal(make_cell("P-02"), "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)


def ingest(client, user, samples: list[dict]) -> dict:
    client.force_login(user)
    response = client.post(
        "/api/v1/signals/samples", data=json.dumps({"samples": samples}), content_type="application/json"
    )
    client.logout()
    assert response.status_code == 200, response.content
    return response.json()


def at(signal, value_: float, seconds_ago: float) -> dict:
    time = timezone.now() - timedelta(seconds=seconds_ago)
    return {"signal_id": signal.pk, "time": time.isoformat(), "value": value_}


# -- the exposition -------------------------------------------------------------------------------
@pytest.mark.django_db
def test_metrics_is_prometheus_text_with_every_family(client, admin_user, token_of):
    response = client.get("/metrics", **token_of(admin_user))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    names = {family.name for family in text_string_to_metric_families(response.content.decode())}
    assert set(FAMILIES) <= names, sorted(set(FAMILIES) - names)
    samples = parse(response.content.decode())
    # Every alarm state and work-order status is present, at 0 on an empty plant.
    assert value(samples, "aria_alarms", state="active_unack") == 0
    assert ("aria_alarms", frozenset({("state", "shelved")})) in samples
    assert ("aria_work_orders", frozenset({("status", "in_progress")})) in samples
    assert value(samples, "aria_metrics_collector_up", collector="sentinel.alarms") == 1
    assert value(samples, "aria_metrics_collector_up", collector="workorders.work_orders") == 1


@pytest.mark.django_db
def test_openmetrics_is_served_when_asked_for(client, admin_user, token_of):
    response = client.get("/metrics", HTTP_ACCEPT="application/openmetrics-text; version=1.0.0", **token_of(admin_user))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert response.content.decode().rstrip().endswith("# EOF")


@pytest.mark.django_db
def test_ingested_samples_count_and_their_lag_is_observed(client, scrape, operator, hot_signal):
    before = scrape()
    body = ingest(client, operator, [at(hot_signal, 2.0 + i / 10, seconds_ago=30 - i) for i in range(7)])
    assert body["accepted"] == 7
    after = scrape()
    assert value(after, "aria_ingest_samples_total") - value(before, "aria_ingest_samples_total") == 7
    # One batch, one lag observation: its newest sample was ~24 s old, so above the 10 s bucket.
    assert value(after, "aria_ingest_lag_seconds_count") - value(before, "aria_ingest_lag_seconds_count") == 1
    new_in_10s = value(after, "aria_ingest_lag_seconds_bucket", le="10.0") - value(
        before, "aria_ingest_lag_seconds_bucket", le="10.0"
    )
    assert new_in_10s == 0


@pytest.mark.django_db
def test_a_raised_alarm_and_its_work_order_show_at_once(client, scrape, operator, hot_signal):
    assert value(scrape(), "aria_alarms", state="active_unack") == 0
    ingest(client, operator, [at(hot_signal, 5.2, seconds_ago=1)])  # above alert 4.5: raised on ingest
    after = scrape()
    assert Alarm.objects.get().state == "active_unack"
    assert value(after, "aria_alarms", state="active_unack") == 1
    assert value(after, "aria_alarms", state="acknowledged") == 0
    # The alarm opened a work order; the gauges say exactly what the table holds, whatever its status.
    order = WorkOrder.objects.get()
    assert value(after, "aria_work_orders", status=order.status) == 1
    assert sum(v for (name, _), v in after.items() if name == "aria_work_orders") == 1


@pytest.mark.django_db
def test_a_scan_is_timed(scrape, hot_signal):
    before = value(scrape(), "aria_sentinel_scan_seconds_count")
    sentinel_scan()
    sentinel_scan()
    assert value(scrape(), "aria_sentinel_scan_seconds_count") - before == 2


class ProbeInput(BaseModel):
    text: str


class ProbeAnswer(BaseModel):
    answer: str


@pytest.fixture
def probe_tools():
    @capability("metricsprobe.echo", description="Echo.", input=ProbeInput, tier=Tier.READ)
    def echo(ctx, params):
        return {"echo": params.text}

    yield
    registry.unregister("metricsprobe.echo")


@pytest.mark.django_db
def test_an_agent_run_counts_its_run_tool_latency_and_tokens(scrape, operator, probe_tools):
    spec = AgentSpec(
        name="metrics_probe",
        system_prompt="Probe.",
        tools=["metricsprobe.echo"],
        finish_tool=FinishTool("submit_answer", "Finish.", ProbeAnswer),
    )
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("echo", {"text": "hi"})]),
            FakeReply(tool_calls=[("no_such_tool", {})]),
            FakeReply(tool_calls=[("submit_answer", {"answer": "done"})]),
        ]
    )
    before = scrape()
    result = run_agent(spec, messages="go", ctx=CapabilityContext(user=operator), engine=engine)
    after = scrape()
    run = AgentRun.objects.get(pk=result.run.pk)
    assert run.finish_reason == "submit_answer"

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("aria_agent_runs_total", agent="metrics_probe", finish_reason="submit_answer") == 1
    assert delta("aria_agent_run_seconds_count", agent="metrics_probe") == 1
    assert delta("aria_agent_tool_call_seconds_count", agent="metrics_probe", tool="echo") == 1
    assert delta("aria_agent_tool_call_errors_total", agent="metrics_probe", tool="echo") == 0
    assert delta("aria_agent_tool_call_errors_total", agent="metrics_probe", tool="no_such_tool") == 1
    assert run.input_tokens > 0
    assert delta("aria_agent_tokens_total", agent="metrics_probe", direction="input") == run.input_tokens
    assert delta("aria_agent_tokens_total", agent="metrics_probe", direction="output") == run.output_tokens


@pytest.mark.django_db
def test_the_dispatch_outbox_reports_unsent_intents_and_the_oldest_age(scrape):
    assert value(scrape(), "aria_dispatch_outbox_pending") == 0
    now = timezone.now()
    DispatchIntent.objects.create(task_name="core.ping", args=["a"], dedupe_key="metrics:a", scheduled_for=now)
    DispatchIntent.objects.create(
        task_name="core.ping", args=["b"], dedupe_key="metrics:b", scheduled_for=now, attempts=2, last_error="refused"
    )
    DispatchIntent.objects.create(
        task_name="core.ping", args=["c"], dedupe_key="metrics:c", scheduled_for=now, sent_at=now
    )
    DispatchIntent.objects.filter(dedupe_key="metrics:a").update(created_at=now - timedelta(minutes=10))
    samples = scrape()
    assert value(samples, "aria_dispatch_outbox_pending") == 2
    assert value(samples, "aria_dispatch_outbox_failing") == 1
    assert value(samples, "aria_dispatch_outbox_oldest_seconds") >= 600


@pytest.mark.django_db
def test_a_failing_collector_is_reported_and_the_scrape_still_answers(scrape):
    def broken():
        raise RuntimeError("database away")
        yield  # a generator, like the real ones

    register_collector("tests.broken", broken)
    try:
        samples = scrape()
    finally:
        from core import metrics

        metrics._collectors.pop("tests.broken", None)
    assert value(samples, "aria_metrics_collector_up", collector="tests.broken") == 0
    assert value(samples, "aria_metrics_collector_up", collector="sentinel.alarms") == 1


@pytest.mark.django_db
def test_a_scrape_costs_the_same_queries_for_3_or_30_alarms_and_orders(client, admin_user, token_of, operator):
    headers = token_of(admin_user)

    def raise_alarms(n: int, start: int) -> None:
        cell = make_cell(f"Q-{start}")
        signals = [make_signal(cell, f"temp_{start + i}", alert=10.0, trip=None) for i in range(n)]
        ingest(client, operator, [at(s, 50.0, seconds_ago=1) for s in signals])

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/metrics", **headers).status_code == 200
        return len(captured)

    raise_alarms(3, 0)
    few = queries()
    raise_alarms(27, 100)
    assert Alarm.objects.count() == 30 and WorkOrder.objects.count() >= 2
    assert queries() == few


# -- WebSockets -----------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
async def test_open_websockets_are_counted_until_they_close(admin_user, token_of):
    from aria_project.asgi import application

    def clients(samples: dict) -> float:
        return value(samples, "aria_websocket_clients", consumer="EventsConsumer")

    def read() -> dict:
        try:
            return parse(Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode())
        finally:
            connections.close_all()  # this helper thread's connection must not outlive the test

    def session_cookie() -> bytes:
        c = Client()
        c.force_login(admin_user)
        connections.close_all()
        return f"sessionid={c.cookies['sessionid'].value}".encode()

    headers = [(b"cookie", await sync_to_async(session_cookie)()), (b"origin", b"http://testserver")]
    before = clients(await sync_to_async(read)())
    comm = WebsocketCommunicator(application, "/ws/events", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    assert clients(await sync_to_async(read)()) == before + 1
    anonymous = WebsocketCommunicator(application, "/ws/events", headers=[(b"origin", b"http://testserver")])
    await anonymous.connect()
    assert (await anonymous.receive_output(timeout=2))["code"] == 4401  # refused: never counted
    assert clients(await sync_to_async(read)()) == before + 1
    await comm.disconnect()
    assert clients(await sync_to_async(read)()) == before


# -- Celery queue depth (Redis) --------------------------------------------------------------------
@pytest.mark.django_db
def test_without_redis_there_is_no_queue_family(scrape, settings):
    settings.REDIS_URL = ""
    assert not [key for key in scrape() if key[0] == "aria_celery_queue_length"]


@pytest.mark.integration
@pytest.mark.django_db
def test_the_celery_queue_depth_is_read_from_redis(scrape, settings):
    import redis

    queue = f"aria-metrics-test-{os.getpid()}"
    settings.REDIS_URL = os.environ["REDIS_URL"]
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    broker = redis.Redis.from_url(settings.REDIS_URL)
    try:
        broker.rpush(queue, "m1", "m2", "m3")
        broker.rpush(f"{queue}\x06\x166", "p1")  # kombu's list for priority 6
        assert value(scrape(), "aria_celery_queue_length", queue=queue) == 4
    finally:
        broker.delete(queue, f"{queue}\x06\x166")


# -- several processes -----------------------------------------------------------------------------
COUNT_IN_A_PROCESS = """
import django, sys
django.setup()
from sentinel.metrics import INGEST_SAMPLES
INGEST_SAMPLES.inc(int(sys.argv[1]))
"""

SCRAPE_IN_A_PROCESS = """
import django, json
django.setup()
from django.test import Client
response = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")
print(json.dumps({"status": response.status_code, "body": response.content.decode()}))
"""


def test_multiprocess_mode_sums_what_every_process_counted(tmp_path: Path):
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "aria_project.settings_test",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "ARIA_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}",  # no tables: DB collectors report down
        "PYTHONPATH": str(ROOT),
    }

    def run(code: str, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    run(COUNT_IN_A_PROCESS, "5")  # e.g. a web process
    run(COUNT_IN_A_PROCESS, "7")  # and a worker
    answer = json.loads(run(SCRAPE_IN_A_PROCESS).strip().splitlines()[-1])
    assert answer["status"] == 200
    samples = parse(answer["body"])
    assert value(samples, "aria_ingest_samples_total") == 12
    assert value(samples, "aria_metrics_collector_up", collector="sentinel.alarms") == 0
