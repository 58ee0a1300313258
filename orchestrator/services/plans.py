"""Plan writes: create (plan → validate → draft), approve, cancel, autonomy edits, transitions, and one
person's moves on a single step (stop a running or waiting step, skip a pending one)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from core.events import publish
from core.transitions import Move, StateMachine, transition
from orchestrator.choices import (
    PLAN_FINISHED,
    PLAN_TRANSITIONS,
    STEP_SKIPPABLE,
    STEP_STOPPABLE,
    STEP_TRANSITIONS,
    Autonomy,
    InteractionStatus,
    PlanStatus,
    StepStatus,
)
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning import Proposal, get_planner, normalize_refs
from orchestrator.planning.validation import validate_proposals
from orchestrator.services.plan_choices import open_plan_choices, plan_steps_save, refuse_while_choosing

PLAN_MACHINE = StateMachine("plan", PLAN_TRANSITIONS)
STEP_MACHINE = StateMachine("step", STEP_TRANSITIONS)


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
    derived_from: Plan | None = None,
    derivation: dict[str, Any] | None = None,
) -> Plan:
    """Ask the planner for steps (or take the given ones), validate them against the registry,
    store a draft plan (`derived_from`/`derivation`: the plan it is a changed copy of, and how)."""
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
    if derived_from is not None and derivation is None:  # re-planned from a changed goal: what differs
        derivation = step_changes(derived_from, [s.capability for s in checked.steps])
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
            derived_from=derived_from,
            derivation=derivation or {},
        )
        plan_steps_save(plan, checked.steps)
        open_plan_choices(plan, proposal.choices)  # "which one did you mean?" before it can be approved
        audit_record(
            actor=owner,
            action="plan.create",
            target_type="plan",
            target_id=plan.pk,
            details={
                "planner": planner,
                "template": proposal.template,
                "steps": len(checked.steps),
                **({"derived_from": derived_from.pk, "derivation": derivation} if derived_from else {}),
            },
        )
        plan_updated(plan)
    return plan


def step_changes(source: Plan, capabilities: list[str]) -> dict[str, Any]:
    """How a plan re-planned from `source` differs in structure: the source's steps with no counterpart
    (same capability) in the new plan, and the new steps with none in the source."""
    unmatched = list(capabilities)
    removed = []
    for step in source.steps.order_by("order"):
        if step.capability in unmatched:
            unmatched.remove(step.capability)
        else:
            removed.append({"order": step.order, "capability": step.capability})
    added, left = [], list(unmatched)
    for order, capability in enumerate(capabilities, start=1):
        if capability in left:
            left.remove(capability)
            added.append({"order": order, "capability": capability})
    return {"from_plan": source.pk, "removed": removed, "added": added, "goal_was": source.goal}


def plan_derive(*, source: Plan, owner: AbstractBaseUser, remove_steps: list[int], goal: str = "") -> Plan:
    """ "Same as plan N but without step X": a new draft plan with the source's steps minus `remove_steps`
    (orders), renumbered; a step that depended on a removed one depends on what that one depended on.
    The new plan records `derived_from` and the structural change; the source is left as it is."""
    steps = list(source.steps.order_by("order"))
    by_order = {s.order: s for s in steps}
    removed = sorted(set(remove_steps))
    if not removed:
        raise InvalidInput("Name the step(s) to leave out.", field="remove_steps")
    unknown = [o for o in removed if o not in by_order]
    if unknown:
        raise InvalidInput(f"Plan {source.pk} has no step {', '.join(map(str, unknown))}.", field="remove_steps")
    kept = [s for s in steps if s.order not in removed]
    if not kept:
        raise InvalidInput("Leaving out every step leaves no plan.", field="remove_steps")
    position = {s.order: index for index, s in enumerate(kept)}

    def inherited(order: int) -> set[int]:  # a removed step's place in the graph goes to its own dependencies
        return {order} if order in position else {d for dep in by_order[order].depends_on for d in inherited(dep)}

    proposals = [
        {
            "capability": s.capability,
            "inputs": s.inputs,
            "quality_gate": s.quality_gate,
            "depends_on": sorted({position[d] for dep in s.depends_on for d in inherited(dep)}),
        }
        for s in kept
    ]
    derivation = {
        "from_plan": source.pk,
        "removed": [{"order": o, "capability": by_order[o].capability} for o in removed],
        "added": [],
        "orders": {str(s.order): position[s.order] + 1 for s in kept},  # old order → new order
    }
    return plan_create(
        owner=owner, goal=goal.strip() or source.goal, constraints=source.constraints, done_when=source.done_when,
        context_refs=source.context_refs, autonomy=source.autonomy, steps=proposals,
        derived_from=source, derivation=derivation,
    )  # fmt: skip


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


def step_stop(*, step: PlanStep, actor: AbstractBaseUser, reason: str = "") -> PlanStep:
    """Stop one step that runs, waits for a job or waits for a human: it ends `skipped` with who
    stopped it and why (a worker still running it has its late outcome discarded: the outcome write
    is guarded on `running`), its open asks are withdrawn and the plan goes on with the other steps."""
    return _step_end(step=step, actor=actor, reason=reason, verb="stop", allowed_from=STEP_STOPPABLE)


def step_skip(*, step: PlanStep, actor: AbstractBaseUser, reason: str = "") -> PlanStep:
    """Skip one step before it runs (pending, or waiting for a permission): it ends `skipped` and the
    steps that depend on it run without it, as after a rejected permission."""
    return _step_end(step=step, actor=actor, reason=reason, verb="skip", allowed_from=STEP_SKIPPABLE)


def _step_end(*, step: PlanStep, actor: AbstractBaseUser, reason: str, verb: str, allowed_from: frozenset) -> PlanStep:
    reason = (reason or "").strip()[:500]
    with transaction.atomic():
        plan = Plan.objects.select_for_update().get(pk=step.plan_id)  # lock order: plan, then step
        if plan.status in PLAN_FINISHED:
            raise Conflict(f"Plan {plan.pk} is {plan.status}; its steps are final.", allowed=[], status=plan.status)
        if verb == "stop" and plan.status not in (PlanStatus.RUNNING, PlanStatus.PAUSED):
            raise Conflict(f"Plan {plan.pk} is {plan.status}; nothing of it runs to stop.", allowed=[])
        locked = PlanStep.objects.select_for_update().get(pk=step.pk)
        if locked.status not in allowed_from:
            which = "running or waiting" if verb == "stop" else "pending or waiting for a permission"
            raise Conflict(
                f"Step {locked.order} of plan {plan.pk} is {locked.status}; only a {which} step can be {verb}ped.",
                allowed=["skip"] if verb == "stop" and locked.status == StepStatus.PENDING else [],
                status=locked.status,
            )
        said = f"{'Stopped' if verb == 'stop' else 'Skipped'} by {actor.get_username()}" + (
            f": {reason}" if reason else ""
        )
        details = {"plan_id": plan.pk, "order": locked.order, "reason": reason}
        transition(
            STEP_MACHINE,
            PlanStep.objects.all(),
            locked.pk,
            StepStatus.SKIPPED,
            actor=actor,
            target_type="plan_step",
            details=details,
            save_fields=(),
            on_move=lambda row, move: _note(row, said),
            audit=lambda m: (f"plan.step_{verb}", {**m.details, "from": m.from_state}),
            event=lambda m: plan_updated_event(plan, m.instance),
        )
        withdrawn = _withdraw_asks(locked, actor, said)
        # paused on this step's ask (not by a person's pause): nothing is left to answer, so it resumes
        if (
            withdrawn
            and plan.status == PlanStatus.PAUSED
            and not plan.interactions.filter(status=InteractionStatus.OPEN).exists()
        ):
            plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=actor, reason="")
            plan.status = PlanStatus.RUNNING
        if plan.status == PlanStatus.RUNNING:  # let a worker walk on from here
            enqueue_execution(plan.pk)
        if withdrawn:
            plan_updated(plan)
    step.refresh_from_db()
    return step


def _note(step: PlanStep, said: str) -> list[str]:
    step.error = said
    return ["error", "updated_at"]


def _withdraw_asks(step: PlanStep, actor: AbstractBaseUser, said: str) -> int:
    """Close the step's open asks: nobody should approve a step that no longer runs."""
    asks = list(Interaction.objects.select_for_update().filter(step=step, status=InteractionStatus.OPEN))
    for ask in asks:
        ask.status, ask.answered_by, ask.answered_at = InteractionStatus.ANSWERED, actor, timezone.now()
        ask.answer = {"decision": "withdrawn", "reason": said}
        ask.save(update_fields=["status", "answer", "answered_by", "answered_at"])
        audit_record(
            actor=actor, action="interaction.withdrawn", target_type="interaction", target_id=ask.pk,
            details={"plan_id": step.plan_id, "step_id": step.pk, "reason": said},
        )  # fmt: skip
    return len(asks)
