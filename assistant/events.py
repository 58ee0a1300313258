"""The assistant's bus events: a draft changed (created, edited, or moved through its lifecycle);
a held tool call was decided (ids and status only: clients re-read it through the owner-scoped route;
private to the session's owner through `owner_id`, like the calls themselves)."""

from core.events.contract import _Payload, register_event_type


class DraftUpdated(_Payload):
    draft_id: int
    draft_type: str
    name: str
    status: str
    version: int


class ToolCallDecided(_Payload):
    owner_id: int  # private: only the session owner's sockets get it (core/consumers.py)
    call_id: int
    session_id: int
    status: str


def register() -> None:
    register_event_type("draft_updated", DraftUpdated)
    register_event_type("tool_call_decided", ToolCallDecided)
