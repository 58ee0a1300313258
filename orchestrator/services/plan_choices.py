"""`choice` asks the planner raises while drafting ("No cell is tagged P-2. Which one did you mean?").

The planner proposes them (`Proposal.choices`); `open_plan_choices` stores one open `choice`
interaction per question on the new draft (no step: it is about the whole plan), answerable by the
owner (or an admin) through the usual answer route, where the answer must be one of the options.
The answer records the pick in `plan.constraints["resolved"]` and plans the goal again with it
(the draft's steps and notes are replaced; a further ambiguity opens a further choice): the planner
runs first, with nothing locked (`choice_replan`: it may call a model for a minute), then a short
transaction locks the plan, checks that nothing it was planned from changed (`planning_basis`) and
writes (`choice_replan_write`; interactions.choice_answer). A draft with an open choice cannot be
approved: the plan is not known yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from core.events import private_scope, publish
from orchestrator.choices import InteractionKind, InteractionStatus, PlanStatus
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning import get_planner
from orchestrator.planning.validation import validate_proposals

RESOLVE_EQUIPMENT = "resolve_equipment"


def open_plan_choices(plan: Plan, choices: list[dict[str, Any]]) -> list[Interaction]:
    """One open choice per planner question (in the caller's transaction), announced on the bus."""
    opened = []
    for choice in choices:
        interaction = Interaction.objects.create(
            plan=plan,
            kind=InteractionKind.CHOICE,
            question=choice["question"],
            options=list(choice["options"]),
            evidence={**choice.get("evidence", {}), "goal": plan.goal},
            required_scope="",
        )
        with private_scope(plan.owner_id):  # the question may name plant details: the owner's alone
            publish(
                "interaction_needed",
                {
                    "plan_id": plan.pk,
                    "interaction_id": interaction.pk,
                    "kind": interaction.kind,
                    "question": interaction.question,
                    "required_scope": "",
                },
            )
        opened.append(interaction)
    return opened


def refuse_while_choosing(plan: Plan) -> None:
    """409 when the draft still waits for a choice (approving it would run an unfinished plan)."""
    open_choice = plan.interactions.filter(kind=InteractionKind.CHOICE, status=InteractionStatus.OPEN).first()
    if open_choice is not None:
        raise Conflict(
            f"Plan {plan.pk} waits for a choice: {open_choice.question} Answer interaction {open_choice.pk} first.",
            allowed=[PlanStatus.CANCELLED],
            status=plan.status,
        )


@dataclass(frozen=True)
class Replan:
    """A draft planned again with a choice, computed before anything is locked or written."""

    basis: tuple[Any, ...]  # what it was planned from (planning_basis): compared again under the lock
    term: str
    choice: str
    constraints: dict[str, Any]
    steps: list[Any]
    notes: list[dict[str, Any]]
    choices: list[dict[str, Any]]
    engine: str = ""  # the engine that planned it again ("" when no model ran)


def planning_basis(plan: Plan) -> tuple[Any, ...]:
    """What a re-plan depends on: if any of it changed while the planner ran, the proposal is stale."""
    return (plan.status, plan.goal, plan.context_refs, plan.constraints, plan.planner)


def choice_replan(plan: Plan, interaction: Interaction, choice: str, actor: AbstractBaseUser) -> Replan | None:
    """Plan the draft again with the chosen option, writing nothing: call it outside any transaction
    (the planner may be a model). None when the choice does not re-plan (not an equipment choice);
    422 (field `choice`) when the planner finds no valid step with it."""
    evidence = interaction.evidence or {}
    if evidence.get("purpose") != RESOLVE_EQUIPMENT:
        return None
    term = str(evidence.get("term") or "")
    constraints = {**(plan.constraints or {})}
    constraints["resolved"] = {**(constraints.get("resolved") or {}), term: choice}
    planner = plan.planner if plan.planner in ("heuristic", "model") else "heuristic"
    proposal = get_planner(planner).propose(
        goal=plan.goal, context_refs=plan.context_refs, constraints=constraints, user=plan.owner
    )
    checked = validate_proposals(proposal.steps, context_refs=plan.context_refs)
    chosen = {"action": "chosen", "capability": "", "reason": f"{term} is {choice} (chosen by {actor.get_username()})"}
    notes = [chosen, *proposal.notes, *checked.notes]
    if not checked.steps:
        raise InvalidInput(f"With {term} = {choice} the planner proposed no valid step.", field="choice", notes=notes)
    return Replan(
        planning_basis(plan), term, choice, constraints, checked.steps, notes, proposal.choices, proposal.engine
    )


def choice_replan_write(plan: Plan, interaction: Interaction, replan: Replan, actor: AbstractBaseUser) -> None:
    """Write a re-plan (in the caller's short transaction, the plan row locked and its basis checked):
    the draft's steps and notes are replaced, a further ambiguity opens a further choice."""
    plan.steps.all().delete()
    plan_steps_save(plan, replan.steps)
    plan.constraints, plan.planner_notes, plan.engine = replan.constraints, replan.notes, replan.engine
    plan.save(update_fields=["constraints", "planner_notes", "engine", "updated_at"])
    open_plan_choices(plan, replan.choices)
    audit_record(
        actor=actor,
        action="plan.replanned",
        target_type="plan",
        target_id=plan.pk,
        details={"interaction_id": interaction.pk, "term": replan.term, "choice": replan.choice,
                 "steps": len(replan.steps)},
    )  # fmt: skip


def plan_steps_save(plan: Plan, steps: list[Any]) -> list[PlanStep]:
    """Write a plan's validated proposals as its steps, numbered from 1 (dependencies too)."""
    return PlanStep.objects.bulk_create(
        PlanStep(
            plan=plan,
            order=index + 1,
            depends_on=[d + 1 for d in step.depends_on],
            capability=step.capability,
            inputs=step.inputs,
            tier=step.tier,
            quality_gate=step.quality_gate,
        )
        for index, step in enumerate(steps)
    )
