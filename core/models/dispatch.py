from django.db import models


class DispatchIntent(models.Model):
    """Follow-up work recorded in the caller's transaction and delivered to the broker after it.

    The request that records it never waits on the broker: the commit tries to send it at once
    (the fast path) and the beat relay (`core.relay_dispatch`) delivers whatever is still unsent.
    """

    task_name = models.CharField(max_length=100)
    args = models.JSONField(default=list, blank=True)
    # One intent per unit of follow-up work: recording the same key twice keeps the first.
    dedupe_key = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    scheduled_for = models.DateTimeField(db_index=True, help_text="Not sent before this time (retry backoff).")
    attempts = models.PositiveIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # What caused it (core.agents.correlation): the task runs in that scope, so agent runs it starts
    # record it too (e.g. an investigation a chat session asked for).
    correlation_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["scheduled_for"], name="dispatch_unsent_due", condition=models.Q(sent_at__isnull=True))
        ]

    def __str__(self) -> str:
        return f"{self.task_name}{self.args} ({'sent' if self.sent_at else 'pending'})"


class WorkLease(models.Model):
    """Who is working on a unit of work, until when: one holder at a time (core.leases)."""

    key = models.CharField(max_length=200, unique=True)
    holder = models.CharField(max_length=200, help_text="host:pid of the process holding it.")
    token = models.CharField(max_length=32)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key} held by {self.holder} until {self.expires_at:%H:%M:%S}"
