"""The one transition helper (core.transitions) as the four machines use it: an illegal move is a
409 `illegal_transition` listing the moves allowed now and the current state, and writes nothing;
a legal move saves the row, writes one audit record and publishes its event."""

from __future__ import annotations

import pytest
from django.db import transaction

from assistant.services.drafts import draft_create, draft_transition
from core.access import OPERATOR
from core.audit import audit_verify
from core.errors import Conflict
from core.models import AuditRecord, Event
from core.transitions import StateMachine, lock_rows, transition, transition_locked_many
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
    assert Event.objects.latest("id").payload == {  # the owner's copy (private: plans_updated)
        "owner_id": owner.pk,
        "plan_id": plan.pk,
        "status": "approved",
        "step_id": None,
        "step_status": None,
        "outcome": "",
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


def test_the_bulk_move_saves_records_and_publishes_each_row(make_user):
    """transition_locked_many: one bulk UPDATE (auto_now fields too), one audit record and one bus
    event per row, in pk order; the chain stays intact."""
    owner = make_user("pia", OPERATOR)
    plans = [Plan.objects.create(owner=owner, goal=f"g{i}", status="draft") for i in range(3)]
    before = {p.pk: p.updated_at for p in plans}
    machine = StateMachine("plan", {"draft": {"approved"}})
    with transaction.atomic():
        locked = lock_rows(Plan.objects.all(), [p.pk for p in reversed(plans)])
        moves = transition_locked_many(
            machine,
            locked,
            "approved",
            actor=owner,
            target_type="plan",
            audit=lambda m: ("plan.approved", {"from": m.from_state}),
            event=lambda m: (
                "plan_updated",
                {
                    "owner_id": owner.pk,
                    "plan_id": m.instance.pk,
                    "status": m.to_state,
                    "step_id": None,
                    "step_status": None,
                },
            ),
        )
    assert [m.instance.pk for m in moves] == sorted(p.pk for p in plans)
    for plan in Plan.objects.filter(pk__in=before):
        assert plan.status == "approved" and plan.updated_at > before[plan.pk]
    records = AuditRecord.objects.filter(action="plan.approved").order_by("id")
    assert [r.target_id for r in records] == [str(p.pk) for p in sorted(plans, key=lambda p: p.pk)]
    events = Event.objects.filter(type="plan_updated").order_by("id")
    assert [e.payload["plan_id"] for e in events][-3:] == sorted(p.pk for p in plans)
    assert audit_verify() is None
