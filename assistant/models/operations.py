from django.conf import settings
from django.db import models


class Operation(models.Model):
    """Intent workbench: one structured, confirmable single mutation (planned → executed)."""

    class Status(models.TextChoices):
        PLANNED = "planned", "Planned"
        EXECUTED = "executed", "Executed"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant_operations")
    session = models.ForeignKey(
        "assistant.Session", null=True, blank=True, on_delete=models.SET_NULL, related_name="operations"
    )
    intent = models.CharField(max_length=40)
    slots = models.JSONField(default=dict, blank=True)
    preview = models.JSONField(default=dict, blank=True)  # the draft the execution will create
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLANNED, db_index=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    executed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.intent} #{self.pk} ({self.status})"
