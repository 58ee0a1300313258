"""The orchestrator's event types on the bus (documented in docs/EVENTS.md)."""

from core.events.contract import _Payload, register_event_type


class PlanUpdated(_Payload):
    plan_id: int
    status: str
    step_id: int | None
    step_status: str | None


class InteractionNeeded(_Payload):
    plan_id: int
    interaction_id: int
    kind: str
    question: str
    required_scope: str


def register() -> None:
    register_event_type("plan_updated", PlanUpdated)
    register_event_type("interaction_needed", InteractionNeeded)
