"""The assistant's bus event: a draft changed (created, edited, or moved through its lifecycle)."""

from core.events.contract import _Payload, register_event_type


class DraftUpdated(_Payload):
    draft_id: int
    draft_type: str
    name: str
    status: str
    version: int


def register() -> None:
    register_event_type("draft_updated", DraftUpdated)
