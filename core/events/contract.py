"""The bus contract: every event type and its exact fields (see ARCHITECTURE.md).

A payload must carry exactly these fields: publish() rejects unknown types, missing fields and
extra fields.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from core.events.render_props import validate_props


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnomalyDetected(_Payload):
    cell_id: int
    signal_def_id: int
    value: float
    threshold: float
    work_order_id: int | None
    time: str
    severity: Literal["alert", "trip"]
    direction: Literal["high", "low"]


class ToolCallStarted(_Payload):
    agent: str
    tool_name: str
    args: dict[str, Any]
    turn_id: str


class ToolCallCompleted(_Payload):
    agent: str
    tool_name: str
    duration_ms: int
    turn_id: str


class AgentHandoff(_Payload):
    from_agent: str
    to_agent: str
    reason: str
    turn_id: str


class ThinkingDelta(_Payload):
    agent: str
    content: str
    turn_id: str


class RcaReady(_Payload):
    work_order_id: int
    rca_summary: str
    confidence: float
    turn_id: str


class WorkOrderReady(_Payload):
    work_order_id: int


class UiRender(_Payload):
    """`props` must match the schema of `component` (core/events/render_props.py)."""

    agent: str
    component: str
    props: dict[str, Any]
    turn_id: str

    @field_validator("props")
    @classmethod
    def _props_match_component(cls, props: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        component = info.data.get("component")
        if component is None:  # the component itself was refused; that error names it
            return props
        return validate_props(component, props)


class AgentStart(_Payload):
    agent: str
    turn_id: str
    # A handed-off agent runs under its own turn; this is the turn of the agent that handed off
    # (null for a top-level run), so a consumer can nest it.
    parent_turn_id: str | None = None


class AgentEnd(_Payload):
    agent: str
    turn_id: str
    finish_reason: str


class ConnectorStatus(_Payload):
    """A plant connector (MQTT, Sparkplug B, OPC UA) changed status (sentinel/connectors)."""

    connector_id: int
    name: str
    kind: str
    status: Literal["stopped", "connecting", "connected", "error"]
    last_message_at: str | None
    messages_per_second: float
    last_error: str
    unknown_tags: int


# Every WebSocket frame is {id, type, created_at, …payload}: a payload field may not reuse these.
ENVELOPE_KEYS = frozenset({"id", "type", "created_at"})

EVENT_TYPES: dict[str, type[_Payload]] = {
    "anomaly_detected": AnomalyDetected,
    "tool_call_started": ToolCallStarted,
    "tool_call_completed": ToolCallCompleted,
    "agent_handoff": AgentHandoff,
    "thinking_delta": ThinkingDelta,
    "rca_ready": RcaReady,
    "work_order_ready": WorkOrderReady,
    "ui_render": UiRender,
    "agent_start": AgentStart,
    "agent_end": AgentEnd,
    "connector_status": ConnectorStatus,
}


def register_event_type(name: str, model: type[_Payload]) -> None:
    """Apps add their event types here (documented in ARCHITECTURE.md) from their apps.ready()."""
    if name in EVENT_TYPES and EVENT_TYPES[name] is not model:
        raise ValueError(f"Event type {name!r} is already defined.")
    clashing = ENVELOPE_KEYS & set(model.model_fields)
    if clashing:
        raise ValueError(f"Event type {name!r} uses frame envelope keys {sorted(clashing)}; rename those fields.")
    EVENT_TYPES[name] = model
