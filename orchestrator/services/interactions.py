"""Interactions: the executor asks a human (permission / choice / confirm) and the plan pauses.

Who may answer:
- a `permission` or `confirm` ask on a non-gated step, or a planner's `choice` (which equipment
  did you mean?): the plan owner or an admin; a choice's answer must be one of its options and
  plans the draft again with it (`choice_answer`: the planner runs before anything is locked);
- a gated step's approval (`required_scope` set): a DIFFERENT human holding that scope — never
  the plan owner, never a service account; a scope name that is not mapped denies.
The owner's answer may carry edited step inputs (the step runs as them; an admin answering someone
else's ask answers it as asked), validated against the capability's schema — but not a
gated step's approval: the approver decides on what the requester asked and the card showed
(four eyes). To change it, they reject with a reason and the requester proposes it again.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from core.access import APPROVER, has_scopes, is_admin, is_service_account
from core.audit import audit_record
from core.capabilities import Tier
from core.errors import Conflict, Forbidden, InvalidInput, NotAuthenticated
from orchestrator.choices import PLAN_FINISHED, InteractionKind, InteractionStatus, PlanStatus, StepStatus
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning.validation import validate_inputs
from orchestrator.services.ask_events import ask_needed, asks_closed
from orchestrator.services.decision_cards import decision_card
from orchestrator.services.plan_choices import choice_replan, choice_replan_write, planning_basis
from orchestrator.services.plans import plan_asks_close, plan_transition, plan_updated

# The scope a gated step's approver must hold (separation of duties: never the owner).
GATED_APPROVAL_SCOPE = APPROVER
APPROVE_WORDS = {"approve", "accept", "yes"}
REJECT_WORDS = {"reject", "deny", "no"}
REPLAN_ATTEMPTS = 3  # a choice's re-plan is done again when the plan changed while it ran


def _open(
    plan: Plan,
    step: PlanStep,
    *,
    kind: str,
    question: str,
    evidence: dict,
    required_scope: str,
    options: list[str],
    coordinator_approvable: bool = False,
) -> Interaction:
    # Lock the plan: a cancel either committed first (seen here) or waits for this ask, then closes it
    ended = Plan.objects.select_for_update().values_list("status", flat=True).get(pk=plan.pk) in PLAN_FINISHED
    interaction = Interaction.objects.create(
        plan=plan,
        step=step,
        kind=kind,
        question=question,
        options=options,
        evidence=evidence,
        required_scope=required_scope,
        coordinator_approvable=coordinator_approvable and not required_scope,
    )
    if ended:  # e.g. a late job result below its gate: the plan is over, so nobody is asked
        plan.refresh_from_db(fields=["status"])
        plan_asks_close(plan, None, announce=False)
        interaction.refresh_from_db()
        return interaction
    if Plan.objects.filter(pk=plan.pk, status=PlanStatus.RUNNING).exists():
        plan_transition(plan=plan, to_status=PlanStatus.PAUSED, actor=None, reason="")
    ask_needed(interaction, owner_id=plan.owner_id)  # the owner and, for a gated step, its approvers
    return interaction


def ask_permission(plan: Plan, step: PlanStep) -> Interaction | None:
    """The gate said ask: pending → waiting_interaction, plan paused, one open permission ask."""
    gated = Tier.parse(step.tier) == Tier.GATED
    with transaction.atomic():
        moved = PlanStep.objects.filter(pk=step.pk, status=StepStatus.PENDING).update(
            status=StepStatus.WAITING_INTERACTION, updated_at=timezone.now()
        )
        if not moved:
            return None
        step.status = StepStatus.WAITING_INTERACTION
        plan_updated(plan, step)
        card = decision_card(plan, step)
        verb = "Approve" if gated else f"Allow step {step.order}"
        return _open(
            plan,
            step,
            kind=InteractionKind.PERMISSION,
            question=f"{verb}: {card['title']}?",
            evidence={
                "capability": step.capability,
                "tier": step.tier,
                "inputs": step.inputs,
                "autonomy": plan.autonomy,
                "card": card,
            },
            required_scope=GATED_APPROVAL_SCOPE if gated else "",
            options=["approve", "reject"],
            # bounded: a read/safe step has no mutation behind it; mutate and gated stay with a human
            coordinator_approvable=Tier.parse(step.tier) <= Tier.SAFE,
        )


def gate_evidence(step: PlanStep, value: Any) -> dict[str, Any]:
    return {"quality_gate": step.quality_gate, "value": value, "result": step.result}


def ask_confirm(plan: Plan, step: PlanStep, *, evidence: dict[str, Any]) -> Interaction:
    gate = step.quality_gate or {}
    question = (
        f"Step {step.order} ({step.capability}) is below its quality gate: "
        f"{gate.get('field')} {gate.get('op')} {gate.get('threshold')} (got {evidence.get('value')!r}). Keep it?"
    )
    return _open(
        plan,
        step,
        kind=InteractionKind.CONFIRM,
        question=question,
        evidence=evidence,
        required_scope="",
        options=["accept", "reject"],
        coordinator_approvable=True,  # keep/skip an already-computed result: bounded, non-gated
    )


def check_may_answer(interaction: Interaction, user: AbstractBaseUser | None) -> None:
    """Raise unless this user may answer (see the module docstring)."""
    if user is None or not user.is_authenticated:
        raise NotAuthenticated("Authentication required.")
    if interaction.required_scope:
        if is_service_account(user):
            raise Forbidden("A service account cannot approve a gated step.", code="separation_of_duties")
        if user.pk == interaction.plan.owner_id:
            raise Forbidden("The plan owner cannot approve their own gated step.", code="separation_of_duties")
        if not has_scopes(user, [interaction.required_scope]):
            raise Forbidden(f"Requires scope: {interaction.required_scope}.", code="missing_scope")
        return
    if user.pk != interaction.plan.owner_id and not is_admin(user):
        raise Forbidden("Only the plan owner or an admin may answer.", code="forbidden")


def _decision(interaction: Interaction, decision: str, choice: str | None) -> bool:
    if interaction.kind == InteractionKind.CHOICE:
        if choice not in interaction.options:
            raise InvalidInput(f"choice must be one of {interaction.options}.", field="choice")
        return True
    word = (decision or "").lower()
    if word not in APPROVE_WORDS | REJECT_WORDS:
        raise InvalidInput("decision must be approve/accept or reject.", field="decision")
    return word in APPROVE_WORDS


def _edited_inputs(step: PlanStep, inputs: dict[str, Any]) -> dict[str, Any]:
    try:
        return validate_inputs(step.capability, inputs)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"inputs.{loc}: {first['msg']}", field=f"inputs.{loc}" if loc else "inputs") from exc


def interaction_answer(
    *,
    interaction: Interaction,
    actor: AbstractBaseUser,
    decision: str = "",
    choice: str | None = None,
    inputs: dict[str, Any] | None = None,
) -> Interaction:
    """Answer an open ask, move its step on, and resume the plan when nothing else is open. A planner's
    choice plans the draft again (`choice_answer`)."""
    if interaction.kind == InteractionKind.CHOICE and interaction.step_id is None:
        return choice_answer(interaction=interaction, actor=actor, decision=decision, choice=choice, inputs=inputs)
    with transaction.atomic():
        _lock_plan(interaction)
        interaction = (
            Interaction.objects.select_for_update(of=("self",)).select_related("plan", "step").get(pk=interaction.pk)
        )
        _answerable(interaction, actor)
        approved = _decision(interaction, decision, choice)
        plan, step = interaction.plan, interaction.step
        if inputs is not None and (interaction.kind != InteractionKind.PERMISSION or step is None):
            raise InvalidInput("Only a permission answer may edit the step's inputs.", field="inputs")
        if inputs is not None and interaction.required_scope:
            raise InvalidInput(
                "inputs: a gated step is approved as asked; to change it, reject it with a reason and "
                "the requester proposes the change again.",
                field="inputs",
            )
        if inputs is not None and actor.pk != plan.owner_id:  # the step runs as its owner: what they asked
            raise InvalidInput(
                "inputs: only the plan owner edits a step's inputs; approve or reject it as asked.", field="inputs"
            )
        edited = _edited_inputs(step, inputs) if inputs is not None else None
        if step is not None and step.status == StepStatus.WAITING_INTERACTION:
            if not approved:  # never run (or its result not kept): who said no, for the step and the plan's outcome
                step.status = StepStatus.SKIPPED
                step.error = (
                    f"Rejected by {actor.get_username()}"
                    if interaction.kind != InteractionKind.CONFIRM
                    else f"Its result (below its quality gate) was rejected by {actor.get_username()}"
                )
            elif interaction.kind == InteractionKind.CONFIRM:
                step.status = StepStatus.DONE  # keep the below-gate result
            else:
                step.status, step.gate_cleared = StepStatus.PENDING, True
                if edited is not None:
                    step.inputs = edited
            step.save(update_fields=["status", "gate_cleared", "inputs", "error", "updated_at"])
            plan_updated(plan, step)
        _answered(interaction, actor, approved=approved, decision=decision, choice=choice, edited=edited)
        plan.refresh_from_db()
        still_open = plan.interactions.filter(status=InteractionStatus.OPEN).exists()
        if plan.status == PlanStatus.PAUSED and not still_open:
            plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=actor)
            enqueue_execution(plan.pk)
    return interaction


def _lock_plan(interaction: Interaction) -> None:
    """Lock the ask's plan first (the lock order: plan, then ask, then step — as a cancel, which
    closes the plan's asks, and a step's stop take them), so an answer and a cancel never deadlock."""
    Plan.objects.select_for_update().values_list("pk", flat=True).get(pk=interaction.plan_id)


def _answerable(interaction: Interaction, actor: AbstractBaseUser) -> None:
    if interaction.status == InteractionStatus.ANSWERED:
        raise Conflict(f"Interaction {interaction.pk} is already answered.", allowed=[], status=interaction.status)
    check_may_answer(interaction, actor)
    refuse_closed(interaction)


def refuse_closed(interaction: Interaction) -> None:
    """409 for an ask of a finished plan (closed with it): nothing may be done with it now."""
    plan = interaction.plan
    if interaction.status == InteractionStatus.CLOSED or plan.status in PLAN_FINISHED:
        raise Conflict(f"Plan {plan.pk} is {plan.status}; its asks are closed.", allowed=[], status=plan.status)


def _answered(
    interaction: Interaction, actor: AbstractBaseUser, *, approved: bool, decision: str, choice: str | None, edited: Any
) -> None:
    """Close the ask with its answer and audit it (in the caller's transaction)."""
    interaction.status = InteractionStatus.ANSWERED
    interaction.answer = {"decision": decision, "choice": choice, "inputs": edited}
    interaction.answered_by = actor
    interaction.answered_at = timezone.now()
    interaction.save(update_fields=["status", "answer", "answered_by", "answered_at"])
    asks_closed([interaction], owner_id=interaction.plan.owner_id, because="answered")
    audit_record(
        actor=actor,
        action=f"interaction.{'approve' if approved else 'reject'}",
        target_type="interaction",
        target_id=interaction.pk,
        details={
            "plan_id": interaction.plan_id,
            "step_id": interaction.step_id,
            "kind": interaction.kind,
            "decision": decision,
            "choice": choice,
            "edited_inputs": edited,
        },
    )


def _choice_checked(interaction: Interaction, actor: AbstractBaseUser, choice: str | None, inputs: Any) -> None:
    _answerable(interaction, actor)
    _decision(interaction, "", choice)  # one of its options, else 422 naming `choice`
    if inputs is not None:
        raise InvalidInput("Only a permission answer may edit the step's inputs.", field="inputs")
    plan = interaction.plan
    if plan.status != PlanStatus.DRAFT:
        raise Conflict(
            f"Plan {plan.pk} is {plan.status}; a choice only shapes a draft. Draft a new plan instead.",
            allowed=[],
            status=plan.status,
        )


def choice_answer(
    *,
    interaction: Interaction,
    actor: AbstractBaseUser,
    choice: str | None,
    decision: str = "",
    inputs: dict[str, Any] | None = None,
) -> Interaction:
    """Answer a planner's choice: plan the draft again with the pick, then write it.

    The planner (a model, with the model planner) runs with nothing locked and no transaction open;
    then a short transaction locks the plan and the ask (plan first, the lock order), checks them
    again and checks that the plan is still what was planned from (`planning_basis`). An ask answered
    meanwhile, or a plan no longer a draft, is a 409 and nothing is written; a plan whose goal or
    constraints changed is planned again (up to REPLAN_ATTEMPTS times, then a 409)."""
    for _ in range(REPLAN_ATTEMPTS):
        seen = Interaction.objects.select_related("plan", "plan__owner").get(pk=interaction.pk)
        _choice_checked(seen, actor, choice, inputs)
        replan = choice_replan(seen.plan, seen, str(choice), actor)  # outside any lock: may take a minute
        basis = replan.basis if replan is not None else planning_basis(seen.plan)
        with transaction.atomic():
            plan = Plan.objects.select_for_update().get(pk=seen.plan_id)
            locked = Interaction.objects.select_for_update().get(pk=seen.pk)
            locked.plan = plan
            _choice_checked(locked, actor, choice, inputs)  # the state may have moved while it planned
            if planning_basis(plan) != basis:
                continue  # planned from what is no longer there: plan again from what is
            if replan is not None:
                choice_replan_write(plan, locked, replan, actor)
            plan_updated(plan)
            _answered(locked, actor, approved=True, decision=decision, choice=choice, edited=None)
            return locked
    raise Conflict(
        f"Plan {interaction.plan_id} kept changing while it was planned again; answer interaction "
        f"{interaction.pk} again.",
        allowed=[],
    )


def interaction_request_approval(*, interaction: Interaction, actor: AbstractBaseUser, note: str = "") -> Interaction:
    """Ask the humans who may decide an open ask to do so (the coordinator cannot decide it).

    Marks the ask as requested (once: a repeated request is a conflict), audits it and announces it
    again on the bus so approvers' badges and pages pick it up.
    """
    with transaction.atomic():
        _lock_plan(interaction)
        interaction = Interaction.objects.select_for_update(of=("self",)).select_related("plan").get(pk=interaction.pk)
        refuse_closed(interaction)  # its plan ended: nobody is asked to decide it
        if interaction.status != InteractionStatus.OPEN:
            raise Conflict(f"Interaction {interaction.pk} is already answered.", allowed=[], status=interaction.status)
        requested_by = interaction.evidence.get("approval_requested_by")
        if requested_by:
            raise Conflict(f"Approval of interaction {interaction.pk} was already requested by {requested_by}.")
        interaction.evidence = {
            **interaction.evidence,
            "approval_requested_by": actor.get_username(),
            "approval_requested_at": timezone.now().isoformat(),
            "approval_note": note,
        }
        interaction.save(update_fields=["evidence"])
        audit_record(
            actor=actor,
            action="interaction.approval_requested",
            target_type="interaction",
            target_id=interaction.pk,
            details={"plan_id": interaction.plan_id, "required_scope": interaction.required_scope, "note": note},
        )
        ask_needed(interaction, owner_id=interaction.plan.owner_id)
    return interaction
