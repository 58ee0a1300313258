"""One person's moves on a single step, and what a stop means for the steps built on it.

- **Stop** (a step that runs, waits for its job or waits for a human): the step ends `stopped` with
  who stopped it and why. Its work was cut off, so there is no output to build on: every step that
  depends on it, directly or through other steps, and has not started is `skipped` at once with a
  reason naming the stopped step (audited `plan.step_blocked`). The executor holds to the same rule
  on every pass (`stopped_roots`: a step downstream of a stopped one is never ready, and is blocked
  the same way), so a dependent of a stopped step never runs, whoever wrote the stop. The plan goes
  on with the steps that do not depend on it.
- **Skip** (a pending step, or one waiting for a permission): the person leaves the step out as not
  needed; it ends `skipped` and the steps that depend on it run without it, as after a rejected
  permission.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict
from core.transitions import StateMachine, transition
from orchestrator.choices import (
    PLAN_FINISHED,
    STEP_SKIPPABLE,
    STEP_STOPPABLE,
    STEP_TRANSITIONS,
    InteractionStatus,
    PlanStatus,
    StepStatus,
)
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.ask_events import asks_closed
from orchestrator.services.plans import plan_transition, plan_updated

STEP_MACHINE = StateMachine("step", STEP_TRANSITIONS)


def step_stop(*, step: PlanStep, actor: AbstractBaseUser, reason: str = "") -> PlanStep:
    """Stop one step that runs, waits for a job or waits for a human: it ends `stopped` (a worker still
    running it has its late outcome discarded: the outcome write is guarded on `running`), its open
    asks are withdrawn, the steps built on it are blocked, and the plan goes on with the others."""
    return _step_end(step=step, actor=actor, reason=reason, verb="stop", allowed_from=STEP_STOPPABLE)


def step_skip(*, step: PlanStep, actor: AbstractBaseUser, reason: str = "") -> PlanStep:
    """Skip one step before it runs (pending, or waiting for a permission): it ends `skipped` and the
    steps that depend on it run without it, as after a rejected permission."""
    return _step_end(step=step, actor=actor, reason=reason, verb="skip", allowed_from=STEP_SKIPPABLE)


def stopped_roots(steps: Iterable[PlanStep]) -> dict[int, PlanStep]:
    """order → the stopped step it is (or is built on, through any chain of dependencies)."""
    steps = list(steps)
    roots = {s.order: s for s in steps if s.status == StepStatus.STOPPED}
    grew = bool(roots)
    while grew:  # to a fixed point: dependencies need not be listed in order
        grew = False
        for step in steps:
            if step.order not in roots and (root := next((roots[d] for d in step.depends_on if d in roots), None)):
                roots[step.order] = root
                grew = True
    return roots


def blocked_steps(steps: Iterable[PlanStep]) -> list[tuple[PlanStep, PlanStep, int | None]]:
    """(pending step, the stopped step it is built on, the dependency it is built on it through, when
    not directly) for every step that must now never run."""
    steps = list(steps)
    roots = stopped_roots(steps)
    blocked = []
    for step in steps:
        if step.status == StepStatus.PENDING and step.order in roots:
            root = roots[step.order]
            via = next((d for d in step.depends_on if d in roots), None)
            blocked.append((step, root, None if via == root.order else via))
    return blocked


def block_dependents(plan: Plan, steps: Iterable[PlanStep], actor: AbstractBaseUser | None) -> list[PlanStep]:
    """Skip every pending step built on a stopped one (in the caller's transaction), each with the
    reason and an audit record; guarded on `pending`, so a step a worker claimed first is left to it."""
    blocked = []
    for step, root, via in blocked_steps(steps):
        who = f"which {actor.get_username()} stopped" if actor is not None else "which was stopped"
        through = f" (through step {via})" if via is not None else ""
        reason = f"Not run: it depends on step {root.order} ({root.capability}){through}, {who}."
        moved = PlanStep.objects.filter(pk=step.pk, status=StepStatus.PENDING).update(
            status=StepStatus.SKIPPED, error=reason, updated_at=timezone.now()
        )
        if not moved:
            continue
        step.status, step.error = StepStatus.SKIPPED, reason
        audit_record(
            actor=actor, action="plan.step_blocked", target_type="plan_step", target_id=step.pk,
            details={"plan_id": plan.pk, "order": step.order, "stopped_step": root.order, "reason": reason},
        )  # fmt: skip
        plan_updated(plan, step)
        blocked.append(step)
    return blocked


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
        move = transition(
            STEP_MACHINE,
            PlanStep.objects.all(),
            locked.pk,
            StepStatus.STOPPED if verb == "stop" else StepStatus.SKIPPED,
            actor=actor,
            target_type="plan_step",
            details=details,
            save_fields=(),
            on_move=lambda row, move: _note(row, said),
            audit=lambda m: (f"plan.step_{verb}", {**m.details, "from": m.from_state}),
        )
        plan_updated(plan, cast(PlanStep, move.instance))  # the step in its new status
        withdrawn = _withdraw_asks(locked, actor, said)
        if verb == "stop":  # nothing built on a stopped step runs
            block_dependents(plan, plan.steps.order_by("order"), actor)
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
    asks_closed(asks, owner_id=step.plan.owner_id, because="withdrawn")
    return len(asks)
