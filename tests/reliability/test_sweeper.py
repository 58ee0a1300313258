"""Work that is lost is re-driven: the sweeper (core.sweep, beat) finds orders stranded in
`detected`/`analyzed` and agent runs orphaned by a killed worker, re-dispatches through the
outbox or ends them with a recorded reason, and never produces a second RCA."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from core.models import AgentRun, AuditRecord, DispatchIntent, Event, WorkLease
from core.sweep import sweep
from sentinel.models import Alarm
from sentinel.signals import alarm_raised
from tests.reliability.conftest import lease_of_killed_worker, messages_lost
from tests.workorders import factories as f
from workorders.dispatch import investigation_dispatch, investigation_key
from workorders.models import FailureHistory, WorkOrder
from workorders.reapers import MAX_REDRIVES, stranded_investigations
from workorders.services.investigation import work_order_investigate

pytestmark = pytest.mark.django_db
LONG_AGO = timedelta(minutes=20)


def open_order_whose_investigation_was_lost(plant) -> WorkOrder:
    """An alarm opens an order; its investigate message is sent and then lost with the worker."""
    vibration = plant.signals.get(key="vibration_mm_s")
    with messages_lost(), transaction.atomic():
        alarm = f.make_alarm(vibration, value=5.0)
        alarm_raised.send(sender=Alarm, alarm=alarm)
    work_order = WorkOrder.objects.get(triggered_by_alarm=alarm)
    DispatchIntent.objects.filter(dedupe_key__startswith=investigation_key(work_order.pk)).update(
        sent_at=timezone.now() - LONG_AGO, created_at=timezone.now() - LONG_AGO
    )
    WorkOrder.objects.filter(pk=work_order.pk).update(updated_at=timezone.now() - LONG_AGO)
    return work_order


def orphaned_run(work_order: WorkOrder, *, agent: str = "investigator") -> AgentRun:
    started = timezone.now() - LONG_AGO
    run = AgentRun.objects.create(
        agent=agent, turn_id="t-killed", engine="fake", subject_type="work_order", subject_id=str(work_order.pk),
        deadline_at=started + timedelta(seconds=120),
    )  # fmt: skip
    AgentRun.objects.filter(pk=run.pk).update(started_at=started)
    return run


def rca_count(work_order: WorkOrder) -> tuple[int, int]:
    rca_events = Event.objects.filter(type="rca_ready", payload__work_order_id=work_order.pk).count()
    return FailureHistory.objects.filter(work_order=work_order).count(), rca_events


def test_an_order_stranded_by_a_killed_worker_is_redriven_to_open(plant, django_capture_on_commit_callbacks):
    work_order = open_order_whose_investigation_was_lost(plant)
    run = orphaned_run(work_order)
    lease_of_killed_worker(investigation_key(work_order.pk))

    with django_capture_on_commit_callbacks(execute=True):
        touched = sweep()

    assert touched["core.orphaned_agent_runs"] == 1 and touched["workorders.stranded_investigations"] == 1
    run.refresh_from_db()
    assert run.status == AgentRun.Status.ABANDONED
    assert "wall timeout" in run.error and run.finished_at is not None
    work_order.refresh_from_db()
    assert work_order.status == "open", work_order.status
    assert rca_count(work_order) == (1, 1)
    redrive = AuditRecord.objects.get(action="work_order.investigation_redriven", target_id=str(work_order.pk))
    assert redrive.details["attempt"] == 1 and "stranded" in redrive.details["reason"]
    assert not WorkLease.objects.filter(key=investigation_key(work_order.pk)).exists()  # released by the re-run

    with django_capture_on_commit_callbacks(execute=True):
        again = sweep()
    assert again["workorders.stranded_investigations"] == 0 and again["core.orphaned_agent_runs"] == 0
    assert rca_count(work_order) == (1, 1)


def test_a_run_left_by_a_dead_holder_is_abandoned_when_the_work_is_redriven(plant, django_capture_on_commit_callbacks):
    """Killed seconds ago: its run is not past its deadline yet, but its lease holder is gone."""
    work_order = open_order_whose_investigation_was_lost(plant)
    run = AgentRun.objects.create(
        agent="investigator", turn_id="t", engine="fake", subject_type="work_order", subject_id=str(work_order.pk),
        deadline_at=timezone.now() + timedelta(seconds=100),
    )  # fmt: skip
    lease_of_killed_worker(investigation_key(work_order.pk))
    with django_capture_on_commit_callbacks(execute=True):
        sweep()
    run.refresh_from_db()
    assert run.status == AgentRun.Status.ABANDONED and "worker was lost" in run.error
    work_order.refresh_from_db()
    assert work_order.status == "open"


def test_a_sweep_racing_a_slow_live_investigation_produces_no_second_rca(plant, django_capture_on_commit_callbacks):
    """The real task holds the lease; sweeps during it (even past its run's deadline) re-dispatch
    nothing, and when it finishes there is exactly one RCA."""
    from core.agents.engines.fake import FakeEngine

    work_order = open_order_whose_investigation_was_lost(plant)
    sweeps: list[dict[str, int]] = []

    class SlowEngine(FakeEngine):
        def complete(self, request, *, on_delta=None):
            if not sweeps:  # mid-investigation: its run overran its deadline, and the beat sweeps twice
                AgentRun.objects.filter(subject_id=str(work_order.pk), status="running").update(
                    deadline_at=timezone.now() - LONG_AGO
                )
                with django_capture_on_commit_callbacks(execute=True):
                    sweeps.append(sweep())
                    sweeps.append(sweep())
            return super().complete(request, on_delta=on_delta)

    result = work_order_investigate(work_order_id=work_order.pk, engine=SlowEngine())

    assert result is not None and result.status == "analyzed"
    assert [s["workorders.stranded_investigations"] for s in sweeps] == [0, 0]
    redriven = DispatchIntent.objects.filter(dedupe_key__contains=":redrive-")
    assert not redriven.exists()
    assert AgentRun.objects.filter(agent="investigator", subject_id=str(work_order.pk)).count() == 1
    assert rca_count(work_order) == (1, 1)


def test_two_sweeps_while_the_broker_is_down_record_one_intent(plant, django_capture_on_commit_callbacks):
    work_order = open_order_whose_investigation_was_lost(plant)
    with django_capture_on_commit_callbacks(execute=False):  # nothing reaches a broker
        assert stranded_investigations(10) == 1
        assert stranded_investigations(10) == 0  # its intent is still waiting to be sent
    assert DispatchIntent.objects.filter(dedupe_key__contains=":redrive-", sent_at__isnull=True).count() == 1
    # Two sweepers in the same window that both got past the check still share one key.
    investigation_dispatch(work_order.pk, reason="redrive-1")
    investigation_dispatch(work_order.pk, reason="redrive-1")
    assert DispatchIntent.objects.filter(dedupe_key__endswith=":redrive-1").count() == 1


def test_an_order_that_never_completes_an_investigation_ends_with_a_recorded_reason(
    plant, django_capture_on_commit_callbacks
):
    """Its investigation kills its worker every time: after MAX_REDRIVES lost runs it gets a
    fallback RCA naming why, instead of being re-driven forever."""
    work_order = open_order_whose_investigation_was_lost(plant)
    for attempt in range(MAX_REDRIVES):  # each re-drive started a run that died with its worker
        DispatchIntent.objects.create(
            task_name="workorders.investigate", args=[work_order.pk], scheduled_for=timezone.now(),
            dedupe_key=f"{investigation_key(work_order.pk)}:redrive-{attempt}", sent_at=timezone.now() - LONG_AGO,
        )  # fmt: skip
        AgentRun.objects.filter(pk=orphaned_run(work_order).pk).update(status=AgentRun.Status.ABANDONED)
    DispatchIntent.objects.update(created_at=timezone.now() - timedelta(days=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert stranded_investigations(10) == 1
    work_order.refresh_from_db()
    assert work_order.status == "analyzed" and work_order.rca_details["fallback"] is True
    assert "lost 3 times" in work_order.rca_summary
    audit = AuditRecord.objects.get(action="work_order.investigation_abandoned", target_id=str(work_order.pk))
    assert audit.details["attempt"] == MAX_REDRIVES + 1


def test_an_order_merely_queued_behind_a_backlog_is_redriven_rarely_and_never_given_up(
    plant, django_capture_on_commit_callbacks
):
    """Re-drives whose messages wait in a long queue (no run ever started): each further re-drive
    waits twice as long, and the order is never ended for it."""
    work_order = open_order_whose_investigation_was_lost(plant)
    for attempt in range(MAX_REDRIVES + 1):
        DispatchIntent.objects.create(
            task_name="workorders.investigate", args=[work_order.pk], scheduled_for=timezone.now(),
            dedupe_key=f"{investigation_key(work_order.pk)}:redrive-{attempt}", sent_at=timezone.now(),
        )  # fmt: skip
    # The last re-drive went out 10 minutes ago: under the back-off of 4 earlier ones (16 windows).
    DispatchIntent.objects.update(created_at=timezone.now() - timedelta(minutes=10))
    with django_capture_on_commit_callbacks(execute=False):
        assert stranded_investigations(10) == 0
    DispatchIntent.objects.update(created_at=timezone.now() - timedelta(minutes=17))
    with django_capture_on_commit_callbacks(execute=True):
        assert stranded_investigations(10) == 1
    work_order.refresh_from_db()
    assert work_order.status == "open" and not work_order.rca_details.get("fallback")


def test_an_order_being_investigated_recently_is_left_alone(plant, django_capture_on_commit_callbacks):
    work_order = open_order_whose_investigation_was_lost(plant)
    WorkOrder.objects.filter(pk=work_order.pk).update(updated_at=timezone.now())  # just opened
    with django_capture_on_commit_callbacks(execute=True):
        assert stranded_investigations(10) == 0
    work_order.refresh_from_db()
    assert work_order.status == "detected"


def test_a_lost_generator_message_is_redriven(plant, django_capture_on_commit_callbacks):
    work_order = open_order_whose_investigation_was_lost(plant)
    with django_capture_on_commit_callbacks(execute=False):  # the RCA lands; the Generator's message is lost
        work_order_investigate(work_order_id=work_order.pk)
    work_order.refresh_from_db()
    assert work_order.status == "analyzed"
    WorkOrder.objects.filter(pk=work_order.pk).update(updated_at=timezone.now() - LONG_AGO)
    DispatchIntent.objects.update(sent_at=timezone.now() - LONG_AGO, created_at=timezone.now() - LONG_AGO)
    with django_capture_on_commit_callbacks(execute=True):
        touched = sweep()
    assert touched["workorders.stranded_generations"] == 1
    work_order.refresh_from_db()
    assert work_order.status == "open"
    assert AuditRecord.objects.filter(action="work_order.generation_redriven").count() == 1
