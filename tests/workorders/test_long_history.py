"""A cell with a long failure history: the Investigator still gets valid tool results and an RCA."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from core.models import AgentRun
from sentinel.models import Alarm
from sentinel.signals import alarm_raised
from tests.workorders import factories as f
from workorders.models import FailureHistory, WorkOrder
from workorders.services import work_order_transition


def earlier_investigations(cell, n: int) -> None:
    """n unresolved rows like the ones each past RCA wrote (long root causes, newest last)."""
    now = timezone.now()
    for i in range(n):
        FailureHistory.objects.create(
            cell=cell,
            failure_time=now - timedelta(hours=n - i),
            failure_mode="bearing_wear",
            root_cause="bearing_wear: the current pattern matches an earlier failure. " + "Detail. " * 120,
            signal_patterns={"vibration_mm_s": {"peak": 4.6, "duration_min": 0.0}},
        )


@pytest.mark.django_db
def test_investigator_with_thirty_failures_still_submits_an_rca(plant, vibration, django_capture_on_commit_callbacks):
    earlier_investigations(plant, 30)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        alarm = f.make_alarm(vibration, value=5.0)
        alarm_raised.send(sender=Alarm, alarm=alarm)

    wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
    run = AgentRun.objects.filter(agent="investigator", subject_id=str(wo.pk)).get()
    history_steps = [s for s in run.steps.all() if s.tool.endswith("get_failure_history")]
    assert history_steps and not any(s.is_error for s in history_steps)
    assert wo.status == "open", wo.rca_details
    assert not wo.rca_details.get("fallback")
    assert wo.rca_summary.startswith("bearing_wear")
    # it cites the confirmed bearing failure, not one of its own earlier unconfirmed RCAs …
    confirmed = FailureHistory.objects.get(cell=plant, failure_mode="bearing_wear", resolved_time__isnull=False)
    assert wo.rca_details["similar_past_failure"].startswith(f"#{confirmed.pk} ")
    # … and the root cause does not nest the matched RCA's own text
    assert wo.rca_summary.count("the current pattern matches") == 1


@pytest.mark.django_db
def test_rca_text_does_not_grow_when_only_earlier_rcas_match(cell, vibration, django_capture_on_commit_callbacks):
    """Without a confirmed failure to match, successive RCAs cite each other; the text stays flat."""
    f.ramp(vibration)
    f.make_kb(cell)
    lengths = []
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            alarm = f.make_alarm(vibration, value=5.0)
            alarm_raised.send(sender=Alarm, alarm=alarm)
        wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
        assert wo.rca_summary.count("the current pattern matches") <= 1, wo.rca_summary
        lengths.append(len(wo.rca_summary))
        alarm.state = "cleared"
        alarm.save(update_fields=["state"])
        work_order_transition(work_order=wo, to_status="cancelled", actor=None)
    assert lengths[2] <= lengths[1] + 20
