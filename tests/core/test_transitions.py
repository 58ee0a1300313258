"""The one transition helper (core.transitions) as the four machines use it: an illegal move is a
409 `illegal_transition` listing the moves allowed now and the current state, and writes nothing;
a legal move saves the row, writes one audit record and publishes its event."""

from __future__ import annotations

import pytest

from assistant.services.drafts import draft_create, draft_transition
from core.access import OPERATOR
from core.errors import Conflict
from core.models import AuditRecord, Event
from core.transitions import StateMachine, transition
from orchestrator.models import Plan
from orchestrator.services.plans import plan_transition
from sentinel.models import Alarm, AlarmEvent
from sentinel.services import alarm_acknowledge
from tests.workorders import factories as f
from workorders.models import WorkOrder, WorkOrderEvent
from workorders.services import work_order_transition

pytestmark = pytest.mark.django_db


def _counts() -> tuple[int, int]:
    return AuditRecord.objects.count(), Event.objects.count()


def _refused(call, *, state_key: str = "status") -> Conflict:
    before = _counts()
    with pytest.raises(Conflict) as exc:
        call()
    assert exc.value.code == "illegal_transition" and exc.value.status_code == 409
    assert _counts() == before  # nothing audited, nothing published
    assert state_key in exc.value.extra
    return exc.value


def test_a_draft_move(make_user):
    owner = make_user("dora", OPERATOR)
    draft = draft_create(owner=owner, type="tool", name="double", spec={})
    err = _refused(lambda: draft_transition(draft=draft, to_status="approved", actor=owner))
    assert (err.extra["allowed"], err.extra["status"]) == (["validating"], "draft")
    draft.refresh_from_db()
    assert draft.status == "draft"

    audits, events = _counts()
    draft = draft_transition(draft=draft, to_status="validating", actor=owner)
    assert draft.status == "validating"
    record = AuditRecord.objects.latest("id")
    assert (record.action, record.details["from_status"], record.details["to_status"]) == (
        "draft.transition",
        "draft",
        "validating",
    )
    event = Event.objects.latest("id")
    assert event.type == "draft_updated" and event.payload["status"] == "validating"
    assert _counts() == (audits + 1, events + 1)


def test_a_plan_move(make_user):
    owner = make_user("pia", OPERATOR)
    plan = Plan.objects.create(owner=owner, goal="g", status="draft")
    err = _refused(lambda: plan_transition(plan=plan, to_status="running", actor=owner))
    assert err.extra["allowed"] == ["approved", "cancelled"] and err.extra["status"] == "draft"
    assert f"Plan {plan.pk} is draft" in err.message

    plan = plan_transition(plan=plan, to_status="approved", actor=owner)
    assert (plan.status, plan.approved_by_id) == ("approved", owner.pk)
    record = AuditRecord.objects.latest("id")
    assert (record.action, record.details["from"], record.details["to"]) == ("plan.approved", "draft", "approved")
    assert Event.objects.latest("id").payload == {
        "plan_id": plan.pk,
        "status": "approved",
        "step_id": None,
        "step_status": None,
    }


def test_an_alarm_move(make_user):
    operator = make_user("olga", OPERATOR)
    alarm = f.make_alarm(f.make_signal(f.make_cell()))
    alarm_acknowledge(alarm=alarm, actor=operator)
    err = _refused(lambda: alarm_acknowledge(alarm=alarm.pk, actor=operator), state_key="state")
    assert err.extra["state"] == "acknowledged"
    assert err.extra["allowed"] == ["cleared", "out_of_service", "shelved"]
    assert AlarmEvent.objects.filter(alarm=alarm).count() == 1
    assert Alarm.objects.get(pk=alarm.pk).state == "acknowledged"


def test_a_work_order_move(make_user):
    operator = make_user("olga", OPERATOR)
    wo = f.make_work_order(f.make_cell(), status="open")
    err = _refused(lambda: work_order_transition(work_order=wo, to_status="detected", actor=operator))
    assert err.field == "to_status" and err.extra["status"] == "open"
    assert err.extra["allowed"][0] == "in_progress"  # the map's order: the usual next step first
    assert WorkOrderEvent.objects.filter(work_order=wo).count() == 0

    work_order_transition(work_order=wo, to_status="in_progress", actor=operator)
    assert WorkOrder.objects.get(pk=wo.pk).status == "in_progress"
    assert AuditRecord.objects.filter(action="work_order.transition", target_id=str(wo.pk)).count() == 1
    event = Event.objects.filter(type="work_order_updated").latest("id")
    assert (event.payload["from_status"], event.payload["status"]) == ("open", "in_progress")


def test_the_helper_on_its_own_keeps_the_row_when_refused(make_user):
    """A hook that fails after the state was set rolls the whole move back (one transaction)."""
    owner = make_user("pia", OPERATOR)
    plan = Plan.objects.create(owner=owner, goal="g", status="draft")
    machine = StateMachine("plan", {"draft": {"approved"}})

    def boom(instance, move):
        raise RuntimeError("hook failed")

    with pytest.raises(RuntimeError):
        transition(
            machine,
            Plan.objects.all(),
            plan.pk,
            "approved",
            actor=owner,
            target_type="plan",
            on_move=boom,
            audit=lambda m: ("plan.x", {}),
        )
    assert Plan.objects.get(pk=plan.pk).status == "draft"
    assert machine.allowed("approved") == [] and not machine.can("approved", "draft")
