"""Plan writes: create (plan → validate → draft), approve, cancel, autonomy edits, transitions. One
person's moves on a single step (stop, skip) are in step_moves.py."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.access import admin_ids
from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from core.events import publish_many
from core.transitions import Move, StateMachine, transition
from orchestrator.choices import (
    PLAN_FINISHED,
    PLAN_TRANSITIONS,
    Autonomy,
    InteractionStatus,
    PlanStatus,
    StepStatus,
)
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning import Proposal, get_planner, normalize_refs
from orchestrator.planning.scope import check_constraints
from orchestrator.planning.validation import validate_proposals
from orchestrator.services.ask_events import asks_closed
from orchestrator.services.guidance import guidance_unknown
from orchestrator.services.plan_choices import open_plan_choices, plan_steps_save, refuse_while_choosing

PLAN_MACHINE = StateMachine("plan", PLAN_TRANSITIONS)


def plan_updated_payloads(updates: Iterable[tuple[Plan, PlanStep | None]]) -> list[dict[str, Any]]:
    """The `plan_updated` copies for these updates (a plan, and the step that moved or None): one per
    recipient each — the plan's owner, then every admin (`core.access.admin_ids`: who `owned_by` shows
    every plan) — carrying that user's `owner_id`, so only their sockets get it (core/events/stream.py).
    The admin ids are read once for all the updates."""
    updates = list(updates)
    if not updates:
        return []
    admins = admin_ids()
    payloads = []
    for plan, step in updates:
        payload = {
            "plan_id": plan.pk,
            "status": plan.status,
            "step_id": step.pk if step else None,
            "step_status": step.status if step else None,
            "outcome": plan.outcome,  # a completed plan that did not apply every change: which, and why
        }
        payloads += [{**payload, "owner_id": user_id} for user_id in dict.fromkeys((plan.owner_id, *admins))]
    return payloads


def plans_updated(updates: Iterable[tuple[Plan, PlanStep | None]]) -> None:
    """Publish `plan_updated` for each update, privately (plan_updated_payloads), with one admin read and
    one event INSERT whatever their number (in the caller's transaction; broadcast on commit). Every
    publisher of `plan_updated` goes through here: the contract requires `owner_id`."""
    payloads = plan_updated_payloads(updates)
    if payloads:
        publish_many("plan_updated", payloads)


def plan_updated(plan: Plan, step: PlanStep | None = None) -> None:
    """Publish `plan_updated` for one plan (and step) to its owner and the admins (plans_updated)."""
    plans_updated([(plan, step)])


# What a plan stores and the Plans page draws is bounded whoever creates it (the API, the chat's
# `orchestrator.create_plan` capability a model calls, the coordinator): the goal and done-when like a
# message, the guidance (50 cells or lines of 100 characters fit with room to spare) by its size as
# JSON, and at most 50 context refs.
GOAL_MAX_CHARS = 2000
CONSTRAINTS_MAX_CHARS = 8000
CONTEXT_REFS_MAX = 50


def plan_input_check(goal: str, done_when: str, constraints: dict[str, Any], context_refs: list[Any]) -> None:
    """422 naming the field when a plan's input is over its bound."""
    for field, text in (("goal", goal), ("done_when", done_when)):
        if len(text) > GOAL_MAX_CHARS:
            raise InvalidInput(f"{field}: at most {GOAL_MAX_CHARS:,} characters ({len(text):,} given).", field=field)
    try:  # NaN and Infinity pass Python's JSON reader but are not JSON: no JSON column stores them
        size = len(json.dumps(constraints, ensure_ascii=False, default=str, allow_nan=False))
    except ValueError:
        raise InvalidInput("constraints: NaN or Infinity is not a JSON number.", field="constraints") from None
    if size > CONSTRAINTS_MAX_CHARS:
        raise InvalidInput(
            f"constraints: at most {CONSTRAINTS_MAX_CHARS:,} characters as JSON ({size:,} given).", field="constraints"
        )
    if len(context_refs) > CONTEXT_REFS_MAX:
        raise InvalidInput(
            f"context_refs: at most {CONTEXT_REFS_MAX} ({len(context_refs)} given).", field="context_refs"
        )


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
    engine: str = "",
) -> Plan:
    """Ask the planner for steps (or take the given ones), validate them against the registry,
    store a draft plan (`derived_from`/`derivation`: the plan it is a changed copy of, and how).
    `engine`: with given steps, the engine that proposed them (the coordinator's, or the source
    plan's for a derived copy), so the offline demo engine's steps carry its mark."""
    goal = (goal or "").strip()
    if not goal:
        raise InvalidInput("A plan needs a goal.", field="goal")
    plan_input_check(goal, done_when, constraints or {}, context_refs or [])
    if autonomy not in Autonomy.values:
        raise InvalidInput(f"autonomy must be one of {Autonomy.values}.", field="autonomy")
    refs = normalize_refs(context_refs or [])
    constraints = constraints or {}
    check_constraints(constraints)
    field, unknown = guidance_unknown(owner, constraints)  # "only on" a cell that does not exist plans nothing
    if unknown:
        raise InvalidInput(f"{field}: {unknown}.", field=field)
    if steps is not None:  # proposed by a caller (e.g. the coordinator delegating), validated the same way
        proposal, planner = Proposal(steps, engine=engine), "given"
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
            engine=proposal.engine,
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
                "engine": proposal.engine,
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
        derived_from=source, derivation=derivation, engine=source.engine,
    )  # fmt: skip


def plan_transition(
    *, plan: Plan, to_status: str, actor: AbstractBaseUser | None, reason: str = "", outcome: str = ""
) -> Plan:
    """Lock the row, check the move against the map, save, audit, publish. `outcome`: what a plan
    moving to completed did not apply (services/plan_outcome.py), kept on the plan, in the audit
    row and on its `plan_updated`."""

    def on_move(locked: Plan, move: Move) -> list[str]:
        fields = ["updated_at"]
        if to_status == PlanStatus.APPROVED:
            locked.approved_by = actor
            fields.append("approved_by")
        if reason:
            locked.error = reason
            fields.append("error")
        if outcome:
            locked.outcome = outcome
            fields.append("outcome")
        return fields

    def audit(m: Move) -> tuple[str, dict[str, Any]]:
        details = {"from": m.from_state, "to": m.to_state, "reason": reason}
        return f"plan.{m.to_state}", {**details, "outcome": outcome} if outcome else details

    with transaction.atomic():  # the move, its audit record and its events commit together
        move = transition(
            PLAN_MACHINE,
            Plan.objects.all(),
            plan.pk,
            to_status,
            actor=actor,
            target_type="plan",
            save_fields=(),
            on_move=on_move,
            message=lambda locked, to: f"Plan {locked.pk} is {locked.status}; it cannot become {to}.",
            audit=audit,
        )
        locked = cast(Plan, move.instance)
        plan_updated(locked)  # the locked row, in its new status
        if to_status in PLAN_FINISHED:  # its open asks close with it and leave their deciders' lists
            plan_asks_close(locked, actor)
    plan.refresh_from_db()
    return plan


ENDED = {PlanStatus.CANCELLED: "was cancelled", PlanStatus.FAILED: "failed", PlanStatus.COMPLETED: "completed"}


def plan_asks_close(plan: Plan, actor: AbstractBaseUser | None, *, announce: bool = True) -> int:
    """`plan` ended (its row locked, in the caller's transaction): its open asks become `closed` —
    nobody may answer them now — with the reason, and its steps waiting on a human end `stopped`
    (never answered, they met nothing). `interaction_closed` (`plan_finished`) goes once to each
    ask's deciders, unless they were never told of it (`announce=False`). No audit row of its own:
    the plan's move is the audited fact. The number of asks closed."""
    said = f"plan {plan.pk} {ENDED.get(plan.status, plan.status)}" + (
        f" by {actor.get_username()}" if actor is not None else ""
    )
    now = timezone.now()
    asks = list(Interaction.objects.filter(plan=plan, status=InteractionStatus.OPEN).order_by("pk"))
    if asks:
        Interaction.objects.filter(pk__in=[a.pk for a in asks], status=InteractionStatus.OPEN).update(
            status=InteractionStatus.CLOSED,
            answer={"decision": "closed", "reason": f"Closed: {said}."},
            answered_at=now,
        )
    PlanStep.objects.filter(plan=plan, status=StepStatus.WAITING_INTERACTION).update(
        status=StepStatus.STOPPED, error=f"Stopped: {said} while it waited for an answer.", updated_at=now
    )
    if announce:
        asks_closed(asks, owner_id=plan.owner_id, because="plan_finished")
    return len(asks)


def plan_approve(*, plan: Plan, actor: AbstractBaseUser) -> Plan:
    refuse_while_choosing(plan)
    return plan_transition(plan=plan, to_status=PlanStatus.APPROVED, actor=actor)


def plan_cancel(*, plan: Plan, actor: AbstractBaseUser) -> Plan:
    return plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=actor)


def plan_patch(*, plan: Plan, actor: AbstractBaseUser, autonomy: str | None = None, cancel: bool = False) -> Plan:
    """PATCH /plans/{id}: an autonomy change and a cancel together, all or nothing. One transaction
    that locks the plan first (plans → steps, docs/KERNEL.md): the executor cannot finish the plan
    between the two, and a refused cancel (409) takes the autonomy change back with it."""
    with transaction.atomic():
        Plan.objects.select_for_update(of=("self",)).get(pk=plan.pk)
        if autonomy is not None:
            plan_set_autonomy(plan=plan, autonomy=autonomy, actor=actor)
        if cancel:
            plan_cancel(plan=plan, actor=actor)
    plan.refresh_from_db()
    return plan


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
