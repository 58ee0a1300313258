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
        """The WebSocket frame: {id, type, …payload}."""
        return {"id": self.pk, "type": self.type, **self.payload}
