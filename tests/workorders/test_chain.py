"""The end-to-end chain: alarm → detected → analyzed (RCA citing the past bearing failure) → open."""

import pytest
from django.db import transaction

from core.models import Event
from sentinel.models import Alarm
from sentinel.signals import alarm_raised
from tests.workorders import factories as f
from workorders.models import FailureHistory, WorkOrder


def raise_alarm(signal) -> Alarm:
    """Through sentinel's detection service when present (it sends alarm_raised), else by hand."""
    with transaction.atomic():
        alarm = f.make_alarm(signal, value=5.0)
        alarm_raised.send(sender=Alarm, alarm=alarm)
    return alarm


def event_types(since_id: int) -> list[str]:
    return list(Event.objects.filter(id__gt=since_id).order_by("id").values_list("type", flat=True))


@pytest.mark.django_db
def test_alarm_to_open_work_order_with_rca_citing_past_bearing_failure(
    plant, vibration, django_capture_on_commit_callbacks
):
    before = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0

    with django_capture_on_commit_callbacks(execute=True):
        alarm = raise_alarm(vibration)

    wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
    assert wo.status == "open"
    assert wo.rca_summary.startswith("bearing_wear")
    bearing = FailureHistory.objects.get(cell=plant, failure_mode="bearing_wear", work_order__isnull=True)
    assert bearing.failure_time.date().isoformat() in wo.rca_summary
    assert wo.confidence > 0.7
    assert [p["ref"] for p in wo.required_parts] == ["SKF-6310-2Z-C3", "GREASE-LGHP2"]
    assert wo.generated_by_agent == "work_order_generator"
    assert list(wo.events.values_list("to_status", flat=True)) == ["detected", "analyzed", "open"]
    new_failure = FailureHistory.objects.get(work_order=wo)
    assert new_failure.signal_patterns["vibration_mm_s"]["peak"] == 5.0

    types = event_types(before)
    assert types[0] == "anomaly_detected"
    milestones = [t for t in types if t in ("anomaly_detected", "rca_ready", "work_order_ready")]
    assert milestones == ["anomaly_detected", "rca_ready", "work_order_ready"]
    assert types.index("agent_start") < types.index("tool_call_started") < types.index("tool_call_completed")
    assert types.index("tool_call_completed") < types.index("rca_ready") < types.index("work_order_ready")
    assert "agent_handoff" in types and "ui_render" in types and "thinking_delta" in types
