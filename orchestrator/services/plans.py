"""Plan writes: create (plan → validate → draft), approve, cancel, autonomy edits, transitions."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from core.events import publish
from core.transitions import Move, StateMachine, transition
from orchestrator.choices import PLAN_TRANSITIONS, Autonomy, PlanStatus
from orchestrator.models import Plan, PlanStep
from orchestrator.planning import Proposal, get_planner, normalize_refs
from orchestrator.planning.validation import validate_proposals
from orchestrator.services.plan_choices import open_plan_choices, refuse_while_choosing

PLAN_MACHINE = StateMachine("plan", PLAN_TRANSITIONS)


def plan_updated_event(plan: Plan, step: PlanStep | None = None) -> tuple[str, dict[str, Any]]:
    return (
        "plan_updated",
        {
            "plan_id": plan.pk,
            "status": plan.status,
            "step_id": step.pk if step else None,
            "step_status": step.status if step else None,
        },
    )


def plan_updated(plan: Plan, step: PlanStep | None = None) -> None:
    """Publish `plan_updated` (in the caller's transaction; broadcast on commit)."""
    publish(*plan_updated_event(plan, step))


def plan_create(
    *,
    owner: AbstractBaseUser,
    goal: str,
    constraints: dict[str, Any] | None = None,
    done_when: str = "",
    context_refs: list[Any] | None = None,
    autonomy: str = Autonomy.ASK_MUTATIONS,
    planner: str = "heuristic",
    steps: list[dict[str, Any]] | None = None,
) -> Plan:
    """Ask the planner for steps (or take the given ones), validate them against the registry,
    store a draft plan."""
    goal = (goal or "").strip()
    if not goal:
        raise InvalidInput("A plan needs a goal.", field="goal")
    if autonomy not in Autonomy.values:
        raise InvalidInput(f"autonomy must be one of {Autonomy.values}.", field="autonomy")
    refs = normalize_refs(context_refs or [])
    constraints = constraints or {}
    if steps is not None:  # proposed by a caller (e.g. the coordinator delegating), validated the same way
        proposal, planner = Proposal(steps), "given"
    else:
        proposal = get_planner(planner).propose(goal=goal, context_refs=refs, constraints=constraints, user=owner)
    checked = validate_proposals(proposal.steps, context_refs=refs)
    notes = proposal.notes + checked.notes
    if not checked.steps:
        raise InvalidInput("The planner proposed no valid step for this goal.", field="goal", notes=notes)
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=owner,
            goal=goal,
            constraints=constraints,
            done_when=done_when,
            context_refs=refs,
            autonomy=autonomy,
            planner=planner,
            template=proposal.template,
            planner_notes=notes,
        )
        PlanStep.objects.bulk_create(
            PlanStep(
                plan=plan,
                order=index + 1,
                depends_on=[d + 1 for d in step.depends_on],
                capability=step.capability,
                inputs=step.inputs,
                tier=step.tier,
                quality_gate=step.quality_gate,
            )
            for index, step in enumerate(checked.steps)
        )
        open_plan_choices(plan, proposal.choices)  # "which one did you mean?" before it can be approved
        audit_record(
            actor=owner,
            action="plan.create",
            target_type="plan",
            target_id=plan.pk,
            details={"planner": planner, "template": proposal.template, "steps": len(checked.steps)},
        )
        plan_updated(plan)
    return plan


def plan_transition(*, plan: Plan, to_status: str, actor: AbstractBaseUser | None, reason: str = "") -> Plan:
    """Lock the row, check the move against the map, save, audit, publish."""

    def on_move(locked: Plan, move: Move) -> list[str]:
        fields = ["updated_at"]
        if to_status == PlanStatus.APPROVED:
            locked.approved_by = actor
            fields.append("approved_by")
        if reason:
            locked.error = reason
            fields.append("error")
        return fields

    transition(
        PLAN_MACHINE,
        Plan.objects.all(),
        plan.pk,
        to_status,
        actor=actor,
        target_type="plan",
        save_fields=(),
        on_move=on_move,
        message=lambda locked, to: f"Plan {locked.pk} is {locked.status}; it cannot become {to}.",
        audit=lambda m: (f"plan.{m.to_state}", {"from": m.from_state, "to": m.to_state, "reason": reason}),
        event=lambda m: plan_updated_event(m.instance),
    )
    plan.refresh_from_db()
    return plan


def plan_approve(*, plan: Plan, actor: AbstractBaseUser) -> Plan:
    refuse_while_choosing(plan)
    return plan_transition(plan=plan, to_status=PlanStatus.APPROVED, actor=actor)


def plan_cancel(*, plan: Plan, actor: AbstractBaseUser) -> Plan:
    return plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=actor)


def plan_set_autonomy(*, plan: Plan, autonomy: str, actor: AbstractBaseUser) -> Plan:
    if autonomy not in Autonomy.values:
        raise InvalidInput(f"autonomy must be one of {Autonomy.values}.", field="autonomy")
    with transaction.atomic():
        locked = Plan.objects.select_for_update().get(pk=plan.pk)
        if locked.status in (PlanStatus.COMPLETED, PlanStatus.CANCELLED, PlanStatus.FAILED):
            raise Conflict(f"Plan {locked.pk} is {locked.status}; its autonomy is final.", allowed=[])
        old = locked.autonomy
        locked.autonomy = autonomy
        locked.save(update_fields=["autonomy", "updated_at"])
        audit_record(
            actor=actor,
            action="plan.autonomy",
            target_type="plan",
            target_id=locked.pk,
            details={"from": old, "to": autonomy},
        )
        plan_updated(locked)
    plan.refresh_from_db()
    return plan
