from django.conf import settings
from django.db import models


class AgentRun(models.Model):
    """One run of one agent through the agent loop, with every step it took."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        FAILED = "failed", "Failed"
        # Its process died or hung past the run's wall timeout: ended by the sweeper with a reason.
        ABANDONED = "abandoned", "Abandoned"

    agent = models.CharField(max_length=64, db_index=True)
    turn_id = models.CharField(max_length=64, db_index=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who asked for a run that acts as another principal, and so pays for it in the daily token
    # budget (core.throttling): a draft's agent review runs as the reviewer, billed to its author.
    # Null: the run's `user` pays.
    billed_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    engine = models.CharField(max_length=32)
    model = models.CharField(max_length=100, blank=True)
    system_prompt = models.TextField(blank=True)
    prompt_ref = models.CharField(max_length=200, blank=True, help_text="Published prompt version used, if any.")
    input_summary = models.TextField(blank=True)
    output_summary = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING, db_index=True)
    finish_reason = models.CharField(max_length=32, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    subject_type = models.CharField(max_length=64, blank=True)
    subject_id = models.CharField(max_length=64, blank=True)
    # What caused the run (an assistant session's correlation id), for "everything this session did".
    correlation_id = models.CharField(max_length=64, blank=True, db_index=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    turns = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    # started_at + the spec's wall timeout; a run still `running` past it (plus grace) is orphaned.
    deadline_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["subject_type", "subject_id"])]

    def __str__(self) -> str:
        return f"{self.agent} run #{self.pk} ({self.status})"


class AgentStep(models.Model):
    """One tool call (or model turn) inside an agent run."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, default="tool")  # tool | finish | handoff | model
    tool = models.CharField(max_length=100, blank=True)
    args = models.JSONField(default=dict, blank=True)
    result_summary = models.TextField(blank=True)
    is_error = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="agent_step_unique_index")]

    def __str__(self) -> str:
        return f"step {self.index} {self.tool}"
