"""What a finished plan changed, in words: the outcome a `completed` plan carries when one of its
change steps (tier mutate or gated) was not applied.

A plan completes when every step is closed (done, skipped or stopped), so "completed" alone would
also say it of a plan whose only change a person rejected at the gate. The executor's move to
`completed` carries this text (`plan_transition(outcome=…)`): stored on the plan, in the audit row
`plan.completed` and on the `plan_updated` event, shown by the Plans page and the drawer's plan card
beside the status. A plan whose change steps were all applied (or that had none: reads only)
completes with no outcome, as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.capabilities import Tier
from orchestrator.choices import StepStatus
from orchestrator.models import PlanStep


def _label(step: PlanStep) -> str:
    return f"step {step.order} ({step.capability})"


def _why(step: PlanStep) -> str:
    """Why it was not applied, as its ending recorded it ("Rejected by ann", "Skipped by olga: …")."""
    said = (step.error or step.get_status_display()).strip().rstrip(".")
    return said[:1].lower() + said[1:]


def change_step(step: PlanStep) -> bool:
    return Tier.parse(step.tier) >= Tier.MUTATE


def plan_outcome(steps: Iterable[PlanStep]) -> str:
    """ "" when every change step was applied (or there was none); else which were applied and which
    were not, and why. A change step that started (claimed at least once) and then ended without
    `done` (stopped while running, its result refused at its quality gate) may have changed
    something: it is said apart, never counted as "nothing applied"."""
    changes = [s for s in steps if change_step(s)]
    applied = [s for s in changes if s.status == StepStatus.DONE]
    unapplied = [s for s in changes if s.status != StepStatus.DONE]
    if not unapplied:
        return ""
    not_run = [s for s in unapplied if not s.attempts]
    started = [s for s in unapplied if s.attempts]
    parts = []
    if applied:
        parts.append("Applied: " + ", ".join(_label(s) for s in applied))
    if not_run:
        head = "Not applied" if applied or started else "Nothing applied"
        parts.append(f"{head} — " + "; ".join(f"{_label(s)}: {_why(s)}" for s in not_run))
    if started:
        parts.append("Started, then not kept — " + "; ".join(f"{_label(s)}: {_why(s)}" for s in started))
    return ". ".join(parts) + "."
