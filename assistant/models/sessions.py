import uuid

from django.conf import settings
from django.db import models

from assistant.choices import AttachmentKind, Mode, Role, RunStatus


def _correlation_id() -> str:
    return uuid.uuid4().hex


class Session(models.Model):
    """A conversation of one owner: operator Q&A chat or an authoring session (mode in metadata)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant_sessions")
    title = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)  # {"mode": chat|build|plan, "kind": qa|authoring}
    archived = models.BooleanField(default=False, db_index=True)
    correlation_id = models.CharField(max_length=64, default=_correlation_id, db_index=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated", "-id"]

    def __str__(self) -> str:
        return self.title or f"Session #{self.pk}"

    @property
    def mode(self) -> str:
        return self.metadata.get("mode", Mode.CHAT)

    @property
    def tool_approval(self) -> str:
        """ask (default) | allow: whether build mode may run mutating tools (assistant.choices.ToolApproval)."""
        return self.metadata.get("tool_approval", "ask")

    @property
    def skill_prefs(self) -> dict[str, list[str]]:
        """This session's skill choices: {"pinned": [names], "disabled": [names]}."""
        prefs = self.metadata.get("skills") or {}
        return {"pinned": list(prefs.get("pinned") or []), "disabled": list(prefs.get("disabled") or [])}


class Message(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:40]}"


class Run(models.Model):
    """One assistant turn through an engine; links the core AgentRun that holds the steps."""

    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.CASCADE, related_name="runs")
    engine = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=100, blank=True)
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.CHAT)
    input_summary = models.TextField(blank=True)
    output_summary = models.TextField(blank=True)
    trace_id = models.CharField(max_length=64, blank=True, db_index=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING, db_index=True)
    selected_skills = models.JSONField(default=list, blank=True)
    agent_run = models.ForeignKey("core.AgentRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Run #{self.pk} ({self.status})"


class Attachment(models.Model):
    """Context for a session; `content_text` is a snapshot capped at CONTENT_LIMIT characters."""

    CONTENT_LIMIT = 50_000
    PER_SESSION_LIMIT = 25

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="attachments")
    kind = models.CharField(max_length=20, choices=AttachmentKind.choices)
    name = models.CharField(max_length=200)
    bucket = models.CharField(max_length=100, blank=True)
    key = models.CharField(max_length=500, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    size = models.PositiveIntegerField(default=0)
    content_text = models.TextField(blank=True)
    truncated = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.name}"
