"""The orchestrator's event types on the bus (documented in docs/EVENTS.md)."""

from typing import Literal

from core.events.contract import _Payload, register_event_type

# A coordinator turn's states in the order it passes them; the last three are terminal.
TURN_STATES = ("inspecting", "validating", "executing", "answered", "rejected", "failed")
TurnState = Literal["inspecting", "validating", "executing", "answered", "rejected", "failed"]


class PlanUpdated(_Payload):
    """Private: one copy for the plan's owner and one for each admin, each naming its recipient in
    `owner_id` (the bus delivers it to no one else). Published only through
    orchestrator.services.plans.plans_updated, which writes the copies."""

    owner_id: int
    plan_id: int
    status: str
    step_id: int | None
    step_status: str | None
    # a completed plan that did not apply every change step (orchestrator.services.plan_outcome),
    # e.g. "Nothing applied — step 2 (…): rejected by ann."; "" for every other plan
    outcome: str = ""


class InteractionNeeded(_Payload):
    plan_id: int
    interaction_id: int
    kind: str
    question: str
    required_scope: str


class InteractionClosed(_Payload):
    """An ask stopped waiting on its deciders; private copies for the same people as its
    `interaction_needed` (orchestrator.services.ask_events)."""

    plan_id: int
    interaction_id: int
    because: Literal["answered", "withdrawn", "plan_finished"]


class CoordinatorTurnState(_Payload):
    """Where a running coordinator turn is. Private to `owner_id` (the bus delivers it to no one
    else); `coordinator_turn_id` is the transcript row, known once the turn is recorded."""

    owner_id: int
    turn_id: str
    conversation: str
    state: TurnState
    coordinator_turn_id: int | None
    offline: bool


def register() -> None:
    register_event_type("plan_updated", PlanUpdated)
    register_event_type("interaction_needed", InteractionNeeded)
    register_event_type("interaction_closed", InteractionClosed)
    register_event_type("coordinator_turn_state", CoordinatorTurnState)
