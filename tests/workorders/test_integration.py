"""The chain through a real Celery worker on PostgreSQL + Redis (skipped without them)."""

import pytest

from aria_project.celery import app as celery_app
from core.dispatch import CORRELATION_HEADER
from core.models import AgentRun, Event
from tests.conftest import wait_until
from tests.workorders import factories as f
from workorders.models import FailureHistory, WorkOrder

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)
def test_detected_order_reaches_open_through_a_real_worker(celery_worker):
    # Given P-02 with a vibration ramp, its KB and failure history, and a detected work order
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)
    f.ramp(vibration)
    f.make_kb(cell)
    f.make_history(cell)
    alarm = f.make_alarm(vibration, value=5.0)
    wo = f.make_work_order(
        cell, triggered_by_alarm=alarm, triggered_by_signal_def=vibration, trigger_anomaly_time=alarm.raised_at
    )
    first_event = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0

    # When the investigation is sent twice through the broker (a duplicate delivery)
    # (queued by a chat session: the message carries its correlation id, as core.dispatch sends it)
    session = {CORRELATION_HEADER: "chat-session-7"}
    celery_app.send_task("workorders.investigate", [wo.pk], headers=session)
    celery_app.send_task("workorders.investigate", [wo.pk], headers=session)

    # Then the worker investigates, the generator follows, and the order is open
    opened = wait_until(lambda: WorkOrder.objects.filter(pk=wo.pk, status="open").exists(), timeout=60)
    assert opened, celery_worker.log_tail()
    wo.refresh_from_db()
    assert wo.rca_summary.startswith("bearing_wear")
    assert wo.generated_by_agent == "work_order_generator"
    # with exactly one RCA and one failure row however the duplicate raced
    assert FailureHistory.objects.filter(work_order=wo).count() == 1
    types = list(Event.objects.filter(id__gt=first_event).order_by("id").values_list("type", flat=True))
    assert types.count("rca_ready") == 1 and types.count("work_order_ready") == 1
    assert types.index("agent_start") < types.index("tool_call_started") < types.index("rca_ready")
    assert types.index("rca_ready") < types.index("work_order_ready")
    assert AgentRun.objects.filter(agent="work_order_generator").count() == 1
    # and every run the session caused in the worker, the generator the investigation queued
    # included, is found under the session's correlation id
    runs = AgentRun.objects.filter(agent__in=["investigator", "work_order_generator"])
    assert {run.correlation_id for run in runs} == {"chat-session-7"}
