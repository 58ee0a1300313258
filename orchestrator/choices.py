"""Plan, step and interaction lifecycles, and the one autonomy × tier gate table.

The gate (`gate_decision`) is the single place that decides whether the executor may run a
step on its own or must ask a human first:

    autonomy \\ tier   read   safe   mutate   gated
    ask_all           ask    ask    ask      ask
    ask_mutations     run    run    ask      ask
    auto              run    run    run      ask

`gated` always asks, whatever the autonomy: gated work stays human (separation of duties).
"""

from __future__ import annotations

import re
from typing import Literal

from django.db import models

from core.capabilities import Tier

# A coordinator conversation's name: a path segment (…/conversations/{name}/export), an export's file
# name and a filter key — a slug ("default", "session-7", "line-2"), never "../../etc" or markup.
CONVERSATION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$"
CONVERSATION = re.compile(CONVERSATION_PATTERN)


class Autonomy(models.TextChoices):
    ASK_ALL = "ask_all", "Ask before every step"
    ASK_MUTATIONS = "ask_mutations", "Ask before mutations"
    AUTO = "auto", "Run on its own (gated still asks)"


class PlanStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    APPROVED = "approved", "Approved"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    COMPLETED = "completed", "Completed"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


PLAN_TRANSITIONS: dict[str, frozenset[str]] = {
    PlanStatus.DRAFT: frozenset({PlanStatus.APPROVED, PlanStatus.CANCELLED}),
    PlanStatus.APPROVED: frozenset({PlanStatus.RUNNING, PlanStatus.CANCELLED}),
    PlanStatus.RUNNING: frozenset({PlanStatus.PAUSED, PlanStatus.COMPLETED, PlanStatus.FAILED, PlanStatus.CANCELLED}),
    PlanStatus.PAUSED: frozenset({PlanStatus.RUNNING, PlanStatus.CANCELLED, PlanStatus.FAILED}),
    PlanStatus.COMPLETED: frozenset(),
    PlanStatus.CANCELLED: frozenset(),
    PlanStatus.FAILED: frozenset(),
}
PLAN_FINISHED = frozenset({PlanStatus.COMPLETED, PlanStatus.CANCELLED, PlanStatus.FAILED})


class StepStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    WAITING_INTERACTION = "waiting_interaction", "Waiting for a human"
    WAITING_JOB = "waiting_job", "Waiting for a job"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped"
    STOPPED = "stopped", "Stopped"


STEP_TRANSITIONS: dict[str, frozenset[str]] = {
    StepStatus.PENDING: frozenset(
        {StepStatus.RUNNING, StepStatus.WAITING_INTERACTION, StepStatus.SKIPPED, StepStatus.FAILED}
    ),
    StepStatus.WAITING_INTERACTION: frozenset(
        {StepStatus.PENDING, StepStatus.DONE, StepStatus.SKIPPED, StepStatus.FAILED, StepStatus.STOPPED}
    ),
    # → stopped: a person stopped the step while it ran or waited (a late outcome is then discarded)
    StepStatus.RUNNING: frozenset(
        {StepStatus.DONE, StepStatus.FAILED, StepStatus.WAITING_JOB, StepStatus.WAITING_INTERACTION, StepStatus.STOPPED}
    ),
    StepStatus.WAITING_JOB: frozenset(
        {StepStatus.DONE, StepStatus.FAILED, StepStatus.WAITING_INTERACTION, StepStatus.STOPPED}
    ),
    StepStatus.DONE: frozenset(),
    StepStatus.FAILED: frozenset(),
    StepStatus.SKIPPED: frozenset(),
    StepStatus.STOPPED: frozenset(),
}
# A dependency is met by a settled step. A stopped step is over but met nothing: what depends on it
# never runs (services/step_moves.py blocks it), though the plan can still complete.
STEP_SETTLED = frozenset({StepStatus.DONE, StepStatus.SKIPPED})
STEP_CLOSED = STEP_SETTLED | {StepStatus.STOPPED}
STEP_FINISHED = frozenset({StepStatus.DONE, StepStatus.SKIPPED, StepStatus.STOPPED, StepStatus.FAILED})
# What one person may do to one step: stop it while it runs or waits, skip it before it runs.
STEP_STOPPABLE = frozenset({StepStatus.RUNNING, StepStatus.WAITING_JOB, StepStatus.WAITING_INTERACTION})
STEP_SKIPPABLE = frozenset({StepStatus.PENDING, StepStatus.WAITING_INTERACTION})


class InteractionKind(models.TextChoices):
    PERMISSION = "permission", "Permission"
    CHOICE = "choice", "Choice"
    CONFIRM = "confirm", "Confirm"


class InteractionStatus(models.TextChoices):
    OPEN = "open", "Open"
    ANSWERED = "answered", "Answered"
    # its plan ended (cancelled, failed, completed) while it was open: nobody answered, nobody may now
    CLOSED = "closed", "Closed with its plan"


Decision = Literal["run", "ask"]

# The one gate table (see the module docstring). Rows: autonomy; columns: tier.
GATE_TABLE: dict[str, dict[Tier, Decision]] = {
    Autonomy.ASK_ALL: {Tier.READ: "ask", Tier.SAFE: "ask", Tier.MUTATE: "ask", Tier.GATED: "ask"},
    Autonomy.ASK_MUTATIONS: {Tier.READ: "run", Tier.SAFE: "run", Tier.MUTATE: "ask", Tier.GATED: "ask"},
    Autonomy.AUTO: {Tier.READ: "run", Tier.SAFE: "run", Tier.MUTATE: "run", Tier.GATED: "ask"},
}


def gate_decision(autonomy: str, tier: Tier | str) -> Decision:
    """Run or ask, from the table. An unknown autonomy asks (fail closed); gated always asks."""
    tier = Tier.parse(tier)
    if tier == Tier.GATED:
        return "ask"
    return GATE_TABLE.get(autonomy, {}).get(tier, "ask")
