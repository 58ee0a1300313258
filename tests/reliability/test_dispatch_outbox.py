"""Follow-up work goes through the outbox: a breaching ingest with the broker unreachable still
answers 200 with the alarm and work order committed, keeps the investigation's intent, and the
relay delivers it once the broker is back."""

import json
import socket
from datetime import timedelta

import pytest
from celery import Celery
from django.utils import timezone

from aria_project.celery import app as aria_app
from core.dispatch import dispatch, dispatch_relay, fast_path_resume
from core.models import DispatchIntent
from sentinel.models import Alarm
from tests.conftest import wait_until
from tests.workorders import factories as f
from workorders.models import WorkOrder

URL = "/api/v1/signals/samples"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def broker_unreachable():
    """This process's Celery app points at a Redis nobody listens on (a real kombu connection
    that is refused), the way a web process sees a broker outage. Restored afterwards."""
    down = Celery("aria-broker-down", set_as_current=False)
    down.config_from_object("django.conf:settings", namespace="CELERY")
    down.conf.broker_url = f"redis://127.0.0.1:{closed_port()}/0"
    down.conf.task_always_eager = False  # this app is the production web tier: it publishes
    down.set_current()
    fast_path_resume()
    try:
        yield down
    finally:
        aria_app.set_current()
        fast_path_resume()


def breaching_post(client, signal, value=8.0):
    sample = {"signal_id": signal.pk, "time": timezone.now().isoformat(), "value": value}
    return client.post(URL, data=json.dumps({"samples": [sample]}), content_type="application/json")


@pytest.mark.django_db(transaction=True)  # the fast path sends from its own thread, after commit
def test_a_breaching_ingest_with_the_broker_down_answers_200_and_the_work_runs_when_it_is_back(
    client, operator, broker_unreachable
):
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell, alert=4.5, trip=7.1)
    f.make_kb(cell)
    f.make_history(cell)
    client.force_login(operator)

    response = breaching_post(client, vibration)

    assert response.status_code == 200, response.content
    assert response.json()["raised"] == [Alarm.objects.get().pk]
    work_order = WorkOrder.objects.get()
    assert work_order.status == "detected"
    intent = DispatchIntent.objects.get(task_name="workorders.investigate")
    assert intent.args == [work_order.pk]
    # The fast path tried the broker, failed, and kept the intent for the relay.
    failed = wait_until(lambda: DispatchIntent.objects.filter(pk=intent.pk).exclude(last_error="").first(), timeout=30)
    assert failed is not None, "the fast path never tried the broker"
    assert failed.sent_at is None and failed.attempts == 1 and "127.0.0.1" in failed.last_error

    # While the broker is down, the relay keeps the intent (and stops at the first refusal).
    DispatchIntent.objects.update(scheduled_for=timezone.now())  # its backoff has elapsed
    assert dispatch_relay() == 0
    assert DispatchIntent.objects.get(pk=intent.pk).sent_at is None

    # The broker is back: the beat relay delivers it and the investigation runs to `open`.
    aria_app.set_current()
    DispatchIntent.objects.update(scheduled_for=timezone.now())
    assert dispatch_relay() >= 1
    assert DispatchIntent.objects.get(pk=intent.pk).sent_at is not None
    work_order.refresh_from_db()
    assert work_order.status == "open"


@pytest.mark.django_db(transaction=True)
def test_a_second_request_during_the_outage_does_not_wait_on_the_broker(client, operator, broker_unreachable):
    """After one refusal the fast path pauses: later commits record intents and return at once."""
    vibration = f.make_signal(f.make_cell("P-02"), alert=4.5, trip=7.1)
    client.force_login(operator)
    assert breaching_post(client, vibration).status_code == 200
    assert wait_until(lambda: DispatchIntent.objects.exclude(last_error="").exists(), timeout=30)
    dispatch("core.ping", args=["during-outage"], key="outage-ping")
    intent = DispatchIntent.objects.get(dedupe_key="outage-ping")
    assert intent.attempts == 0 and intent.sent_at is None  # left to the relay, no send attempted


@pytest.mark.django_db(transaction=True)
def test_a_process_with_an_in_memory_broker_and_no_worker_only_records_intents():
    """A shell or `manage.py simulate` beside `dev.py up`: its own in-memory broker has no
    worker, so it must not "send" there (the message would be lost); the running system's relay
    drains the database."""
    lonely = Celery("aria-second-process", set_as_current=False)
    lonely.config_from_object("django.conf:settings", namespace="CELERY")
    lonely.conf.broker_url = "memory://localhost/"
    lonely.conf.task_always_eager = False
    lonely.set_current()
    try:
        dispatch("core.ping", args=["second-process"], key="second-process-ping")
    finally:
        aria_app.set_current()
    intent = DispatchIntent.objects.get(dedupe_key="second-process-ping")
    assert intent.attempts == 0 and intent.sent_at is None
    assert dispatch_relay() == 1  # the running system's relay (here: this process's eager app)
    from core.models import AuditRecord

    assert AuditRecord.objects.filter(action="core.ping", target_id="second-process").count() == 1


@pytest.mark.django_db
def test_a_key_recorded_twice_keeps_one_intent_and_sends_once(django_capture_on_commit_callbacks):
    from core.models import AuditRecord

    with django_capture_on_commit_callbacks(execute=True):
        dispatch("core.ping", args=["once"], key="ping-once")
        dispatch("core.ping", args=["once"], key="ping-once")
    assert DispatchIntent.objects.filter(dedupe_key="ping-once").count() == 1
    assert AuditRecord.objects.filter(action="core.ping", target_id="once").count() == 1
    assert dispatch_relay() == 0  # already sent


@pytest.mark.django_db
def test_a_delayed_intent_waits_for_its_time():
    dispatch("core.ping", args=["later"], key="ping-later", delay_seconds=600)
    assert dispatch_relay() == 0
    DispatchIntent.objects.update(scheduled_for=timezone.now() - timedelta(seconds=1))
    assert dispatch_relay() == 1
