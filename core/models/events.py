from datetime import datetime

from django.db import models


class Event(models.Model):
    """The outbox: every published bus event, in id order. The channel layer is only the fast path."""

    type = models.CharField(max_length=64, db_index=True)
    payload = models.JSONField()
    turn_id = models.CharField(max_length=64, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.type}"

    def as_frame(self) -> dict:
        """The WebSocket frame: {…payload, id, type, created_at} (the same live and on replay)."""
        return event_frame(self.pk, self.type, self.payload, self.created_at)


# Frame keys the envelope owns: a payload field of the same name is overwritten in the frame.
ENVELOPE_KEYS = ("id", "type", "created_at")


def event_frame(event_id: int, event_type: str, payload: dict, created_at: datetime) -> dict:
    """One bus frame: the payload fields, then the envelope (`created_at` is ISO 8601, UTC)."""
    return {**payload, "id": event_id, "type": event_type, "created_at": created_at.isoformat()}
