"""Goal-plans: a plan of capability-bound steps, and the interactions that pause it for a human."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from orchestrator.choices import (
    Autonomy,
    InteractionKind,
    InteractionStatus,
    PlanStatus,
    StepStatus,
)


class Plan(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="plans")
    goal = models.TextField()
    constraints = models.JSONField(default=dict, blank=True)
    done_when = models.TextField(blank=True)
    context_refs = models.JSONField(default=list, blank=True)
    autonomy = models.CharField(max_length=20, choices=Autonomy.choices, default=Autonomy.ASK_MUTATIONS)
    status = models.CharField(max_length=20, choices=PlanStatus.choices, default=PlanStatus.DRAFT, db_index=True)
    planner = models.CharField(max_length=40, default="heuristic")
    # The engine that proposed the steps (its name, as on its AgentRun): "fake" is the offline demo
    # engine; blank when no model ran (heuristic, template, given steps).
    engine = models.CharField(max_length=40, blank=True)
    template = models.CharField(max_length=120, blank=True)
    planner_notes = models.JSONField(default=list, blank=True)  # repaired / dropped proposals, with reasons
    # "Same as plan N but without step X": the plan this one was derived from and how it differs
    # ({"removed": [{order, capability}], "added": [...], "orders": {old order: new order}}).
    derived_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="derivatives"
    )
    derivation = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # A completed plan whose change steps were not all applied: which were and which not, and why
    # ("Nothing applied — step 2 (…): rejected by ann."); blank otherwise (services/plan_outcome.py).
    outcome = models.TextField(blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Plan {self.pk}: {self.goal[:60]}"


class PlanStep(models.Model):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="steps")
    order = models.PositiveIntegerField()
    depends_on = models.JSONField(default=list, blank=True)  # orders of earlier steps
    capability = models.CharField(max_length=120)
    inputs = models.JSONField(default=dict, blank=True)
    tier = models.CharField(max_length=10)
    quality_gate = models.JSONField(null=True, blank=True)  # {field, op, threshold}
    status = models.CharField(max_length=24, choices=StepStatus.choices, default=StepStatus.PENDING)
    gate_cleared = models.BooleanField(default=False)  # a human allowed this step past the gate
    attempts = models.PositiveIntegerField(default=0)
    idempotency_key = models.CharField(max_length=80, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    job_kind = models.CharField(max_length=60, blank=True)
    job_ref = models.CharField(max_length=120, blank=True)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["plan_id", "order"]
        constraints = [models.UniqueConstraint(fields=["plan", "order"], name="orchestrator_step_order_unique")]
        indexes = [models.Index(fields=["status"], name="orchestrator_step_status")]

    def __str__(self) -> str:
        return f"Step {self.order} {self.capability} ({self.status})"


class Interaction(models.Model):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="interactions")
    step = models.ForeignKey(PlanStep, null=True, blank=True, on_delete=models.CASCADE, related_name="interactions")
    kind = models.CharField(max_length=20, choices=InteractionKind.choices)
    question = models.TextField()
    options = models.JSONField(default=list, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    required_scope = models.CharField(max_length=40, blank=True)  # set: a different human holding it must answer
    # Set by the executor: a bounded non-gated checkpoint (read/safe permission, quality-gate confirm)
    # that the coordinator may decide for the owner. Everything else is answered by a human directly.
    coordinator_approvable = models.BooleanField(default=False)
    answer = models.JSONField(null=True, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=20, choices=InteractionStatus.choices, default=InteractionStatus.OPEN, db_index=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} on plan {self.plan_id} ({self.status})"

    @property
    def separation_of_duties(self) -> bool:
        """A gated approval: the owner may not answer it; a different human with the scope must."""
        return bool(self.required_scope)


class CoordinatorTurn(models.Model):
    """One coordinator turn: what it saw, did and said, hash-chained to the turn before it."""

    class Status(models.TextChoices):
        OK = "ok", "Answered"
        REJECTED = "rejected", "Actions rejected by validation"
        FAILED = "failed", "Failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="coordinator_turns")
    conversation = models.CharField(max_length=80, default="default", db_index=True)
    message = models.TextField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OK)
    prompt_kind = models.CharField(max_length=20, default="model")  # model | no_model
    context_packet = models.JSONField(default=dict)
    tool_calls = models.JSONField(default=list)  # [{tool, args, summary, is_error}]
    action_plan = models.JSONField(null=True, blank=True)
    repair_turns = models.PositiveIntegerField(default=0)
    validation = models.JSONField(default=list)  # [{action_index, check, ok, reason}]
    executed = models.JSONField(default=list)  # [{action_index, type, result}]
    references = models.JSONField(default=dict)
    answer = models.TextField(blank=True)
    error = models.TextField(blank=True)
    agent_run_id = models.BigIntegerField(null=True, blank=True)
    previous_hash = models.CharField(max_length=64, blank=True)
    hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"Turn {self.pk} ({self.status}): {self.message[:50]}"
