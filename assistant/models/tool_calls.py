from django.conf import settings
from django.db import models

from assistant.choices import PendingCallStatus


class PendingToolCall(models.Model):
    """A mutating tool call the model proposed in a session set to ask: stored here, exactly as
    proposed, until the session's owner confirms (it then runs through capability dispatch with the
    owner's scopes) or rejects it. The arguments that run are these, never ones a client sends."""

    session = models.ForeignKey("assistant.Session", on_delete=models.CASCADE, related_name="pending_calls")
    run = models.ForeignKey("assistant.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    agent_run = models.ForeignKey("core.AgentRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    capability = models.CharField(max_length=200)
    tool_name = models.CharField(max_length=100)
    tier = models.CharField(max_length=16)
    args = models.JSONField(default=dict, blank=True)
    description = models.TextField(blank=True)  # what the capability does, for the confirm card
    changes = models.JSONField(default=list, blank=True)  # [{field, before, after}] read when proposed
    status = models.CharField(
        max_length=16, choices=PendingCallStatus.choices, default=PendingCallStatus.PENDING, db_index=True
    )
    result_summary = models.TextField(blank=True)
    error = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"
