"""Work orders, their transitions, failure history (the agents' memory), equipment KB, logbook,
shifts and production records (for OEE)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from workorders.choices import (
    FailureCodeLevel,
    FailureVerification,
    HoldReason,
    Priority,
    RcaVerdict,
    Shift,
    WorkOrderStatus,
)
from workorders.handover_choices import AttachmentMediaType, HandoverStatus


class WorkOrder(models.Model):
    cell = models.ForeignKey("sentinel.Cell", on_delete=models.CASCADE, related_name="work_orders")
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    status = models.CharField(
        max_length=16, choices=WorkOrderStatus.choices, default=WorkOrderStatus.DETECTED, db_index=True
    )
    priority = models.CharField(max_length=10, choices=Priority.choices, default=Priority.MEDIUM, db_index=True)
    required_parts = models.JSONField(default=list, blank=True, help_text='[{"ref": "...", "qty": 1}]')
    required_skills = models.JSONField(default=list, blank=True)
    recommended_actions = models.JSONField(default=list, blank=True)
    rca_summary = models.TextField(blank=True)
    rca_details = models.JSONField(default=dict, blank=True, help_text="The submitted RCA (factors, match, …).")
    confidence = models.FloatField(null=True, blank=True)
    suggested_window_start = models.DateTimeField(null=True, blank=True)
    suggested_window_end = models.DateTimeField(null=True, blank=True)
    estimated_duration_min = models.PositiveIntegerField(null=True, blank=True)
    trigger_anomaly_time = models.DateTimeField(null=True, blank=True)
    triggered_by_signal_def = models.ForeignKey(
        "sentinel.SignalDefinition", null=True, blank=True, on_delete=models.SET_NULL, related_name="work_orders"
    )
    triggered_by_alarm = models.ForeignKey(
        "sentinel.Alarm", null=True, blank=True, on_delete=models.SET_NULL, related_name="work_orders"
    )
    generated_by_agent = models.CharField(max_length=64, blank=True)
    # An order a person raised by hand (a leak, a noise found in the field): who, and the request's
    # Idempotency-Key (a retried or double-clicked request answers the same order, not a second one).
    raised_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    raise_key = models.CharField(max_length=200, blank=True)
    # Work execution: who does it on which shift, why it waits, which required parts are short.
    assigned_shift = models.ForeignKey(
        "workorders.ShiftAssignment", null=True, blank=True, on_delete=models.SET_NULL, related_name="work_orders"
    )
    assigned_technician = models.CharField(max_length=100, blank=True, db_index=True)
    assigned_at = models.DateTimeField(null=True, blank=True)
    hold_reason = models.CharField(max_length=20, choices=HoldReason.choices, blank=True)
    part_shortages = models.JSONField(
        default=list, blank=True, help_text='Set when the order opens: [{"ref", "qty", "on_hand", "listed"}]'
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One work order per alarm, even with two workers racing.
            models.UniqueConstraint(
                fields=["triggered_by_alarm"],
                condition=Q(triggered_by_alarm__isnull=False),
                name="work_order_one_per_alarm",
            ),
            # One order per person and Idempotency-Key, even with two requests racing.
            models.UniqueConstraint(
                fields=["raised_by", "raise_key"],
                condition=~Q(raise_key=""),
                name="work_order_one_per_raise_key",
            ),
        ]
        indexes = [models.Index(fields=["cell", "status"], name="wo_cell_status")]

    def __str__(self) -> str:
        return f"WO-{self.pk} {self.title or self.status}"


class WorkOrderEvent(models.Model):
    """Append-only history of a work order's transitions."""

    work_order = models.ForeignKey(WorkOrder, on_delete=models.CASCADE, related_name="events")
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.CharField(max_length=500, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"WO-{self.work_order_id}: {self.from_status or '∅'} → {self.to_status}"


class FailureHistory(models.Model):
    """A past failure of a cell: what the Investigator matches current patterns against."""

    cell = models.ForeignKey("sentinel.Cell", on_delete=models.CASCADE, related_name="failures")
    failure_time = models.DateTimeField()
    resolved_time = models.DateTimeField(null=True, blank=True)
    failure_mode = models.CharField(max_length=64, db_index=True)
    root_cause = models.TextField(blank=True)
    signal_patterns = models.JSONField(default=dict, blank=True, help_text='{"vibration_mm_s": {"peak": 5.4}}')
    work_order = models.ForeignKey(WorkOrder, null=True, blank=True, on_delete=models.SET_NULL, related_name="failures")
    # failure_mode / root_cause above are the proposal (an agent's RCA); a technician's confirmed
    # or corrected cause is kept beside it, so the proposal's accuracy can be measured.
    verification = models.CharField(
        max_length=10, choices=FailureVerification.choices, default=FailureVerification.PROPOSED, db_index=True
    )
    confirmed_failure_mode = models.CharField(max_length=64, blank=True)
    confirmed_root_cause = models.TextField(blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-failure_time"]
        verbose_name_plural = "failure history"
        indexes = [models.Index(fields=["cell", "failure_time"], name="failure_cell_time")]
        constraints = [
            # One failure row per work order: a retried RCA never records the failure twice.
            models.UniqueConstraint(
                fields=["work_order"], condition=Q(work_order__isnull=False), name="failure_one_per_work_order"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.failure_mode} @ {self.failure_time:%Y-%m-%d}"

    @property
    def is_confirmed(self) -> bool:
        return self.verification in (FailureVerification.CONFIRMED, FailureVerification.CORRECTED)

    @property
    def actual_failure_mode(self) -> str:
        """The technician's failure mode when they corrected it, else the recorded one."""
        return self.confirmed_failure_mode or self.failure_mode

    @property
    def actual_root_cause(self) -> str:
        return self.confirmed_root_cause or self.root_cause

    @property
    def repair_minutes(self) -> float | None:
        if self.resolved_time is None:
            return None
        return (self.resolved_time - self.failure_time).total_seconds() / 60


class EquipmentKB(models.Model):
    """Structured knowledge about one cell: specs, failure modes, spare parts, procedures."""

    cell = models.OneToOneField("sentinel.Cell", on_delete=models.CASCADE, related_name="kb")
    data = models.JSONField(default=dict, blank=True)
    calibration_log = models.JSONField(default=list, blank=True, help_text="Appended on every update.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "equipment KB"
        verbose_name_plural = "equipment KB"

    def __str__(self) -> str:
        return f"KB {self.cell.tag}"


class LogbookEntry(models.Model):
    cell = models.ForeignKey("sentinel.Cell", on_delete=models.CASCADE, related_name="logbook_entries")
    time = models.DateTimeField(db_index=True)
    author = models.CharField(max_length=100)
    shift = models.CharField(max_length=10, choices=Shift.choices, blank=True)
    category = models.CharField(max_length=32, blank=True, help_text="observation, maintenance, handover, …")
    text = models.TextField()
    # The signed-in author of an entry written through ARIA (seeded/imported entries have none).
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-time"]
        verbose_name_plural = "logbook entries"

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M} {self.author}: {self.text[:40]}"


class ShiftAssignment(models.Model):
    date = models.DateField(db_index=True)
    shift = models.CharField(max_length=10, choices=Shift.choices)
    line = models.ForeignKey("sentinel.Line", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    technician = models.CharField(max_length=100)
    role = models.CharField(max_length=50, blank=True)
    skills = models.JSONField(default=list, blank=True)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()

    class Meta:
        ordering = ["date", "starts_at", "technician"]
        constraints = [models.UniqueConstraint(fields=["date", "shift", "technician"], name="shift_one_per_technician")]

    def __str__(self) -> str:
        return f"{self.date} {self.shift} {self.technician}"


class ProductionRecord(models.Model):
    """Planned vs. actual production of one cell in one shift: the inputs of OEE."""

    cell = models.ForeignKey("sentinel.Cell", on_delete=models.CASCADE, related_name="production_records")
    date = models.DateField(db_index=True)
    shift = models.CharField(max_length=10, choices=Shift.choices)
    planned_time_min = models.FloatField()
    run_time_min = models.FloatField()
    ideal_cycle_time_s = models.FloatField()
    total_count = models.PositiveIntegerField()
    good_count = models.PositiveIntegerField()

    class Meta:
        ordering = ["-date", "shift"]
        constraints = [
            models.UniqueConstraint(fields=["cell", "date", "shift"], name="production_one_per_cell_shift"),
            models.CheckConstraint(
                condition=Q(good_count__lte=models.F("total_count")), name="production_good_le_total"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cell.tag} {self.date} {self.shift}"


# --- logbook attachments and shift handover (workorders/services/logbook.py, handover.py) ---


class LogbookAttachment(models.Model):
    """A text attached to a logbook entry: a reading sheet, a CSV export, a note (text only)."""

    entry = models.ForeignKey(LogbookEntry, on_delete=models.CASCADE, related_name="attachments")
    name = models.CharField(max_length=120)
    media_type = models.CharField(max_length=32, choices=AttachmentMediaType.choices, default=AttachmentMediaType.PLAIN)
    text = models.TextField()
    size = models.PositiveIntegerField(help_text="UTF-8 bytes.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.size} B)"


class ShiftHandover(models.Model):
    """A shift handover report: drafted by an agent, edited and signed by the outgoing operator,
    acknowledged by the incoming one (a different person)."""

    date = models.DateField(db_index=True, help_text="The date the shift starts on.")
    shift = models.CharField(max_length=10, choices=Shift.choices)
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    status = models.CharField(
        max_length=16, choices=HandoverStatus.choices, default=HandoverStatus.DRAFT, db_index=True
    )
    outgoing = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="handovers_given",
        help_text="The outgoing operator: drafts, edits and signs.",
    )  # fmt: skip
    incoming = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="handovers_taken",
        help_text="The incoming operator who acknowledged it.",
    )  # fmt: skip
    report = models.TextField(blank=True, help_text="The report as the outgoing operator signs it.")
    draft_report = models.TextField(blank=True, help_text="The agent's draft, kept beside the edits.")
    sections = models.JSONField(default=dict, blank=True, help_text="The structured draft and what it was built from.")
    drafted_by = models.CharField(max_length=64, blank=True, help_text="Agent name; empty when written by hand.")
    drafted_offline = models.BooleanField(default=False, help_text="Drafted by the offline stand-in (no model).")
    agent_run = models.ForeignKey("core.AgentRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    revision = models.PositiveIntegerField(default=0, help_text="Edits since the draft.")
    signed_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledge_comment = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-period_end", "-id"]
        indexes = [models.Index(fields=["status", "period_end"], name="handover_status_end")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="acknowledged") | ~Q(incoming=models.F("outgoing")),
                name="handover_incoming_not_outgoing",
            ),
        ]

    def __str__(self) -> str:
        return f"Handover {self.date} {self.shift} ({self.status})"


class FailureCode(models.Model):
    """One entry of the failure-code list: class → problem → cause → remedy (ISO 14224 style).

    A problem belongs to a class (its equipment type) and names the ARIA failure-mode slug with
    the ISO failure mode (VIB, ELP, …) and mechanism; a cause may belong to a problem or, without
    a parent, apply to any; remedies are the maintenance activities."""

    level = models.CharField(max_length=10, choices=FailureCodeLevel.choices, db_index=True)
    code = models.CharField(max_length=40)
    label = models.CharField(max_length=200)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    equipment_type = models.CharField(max_length=50, blank=True, help_text="Classes: the cells' equipment_type.")
    failure_mode = models.CharField(max_length=64, blank=True, help_text="Problems: the ARIA slug, e.g. bearing_wear.")
    iso_mode = models.CharField(max_length=8, blank=True, help_text="Problems: ISO 14224 failure mode, e.g. VIB.")
    iso_mechanism = models.CharField(max_length=40, blank=True, help_text="Problems: e.g. wear, cavitation.")
    iso_group = models.CharField(max_length=40, blank=True, help_text="Causes: design, operation_maintenance, …")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["level", "code"]
        constraints = [models.UniqueConstraint(fields=["level", "code"], name="failure_code_unique_per_level")]

    def __str__(self) -> str:
        return f"{self.level} {self.code}: {self.label}"


class CompletionReport(models.Model):
    """What the technician reports when the order closes: work done, the actual failure (coded),
    parts used, labour hours and whether the RCA was right."""

    work_order = models.OneToOneField(WorkOrder, on_delete=models.CASCADE, related_name="completion_report")
    work_done = models.TextField()
    failure_class = models.ForeignKey(FailureCode, on_delete=models.PROTECT, related_name="+")
    problem = models.ForeignKey(FailureCode, on_delete=models.PROTECT, related_name="+")
    cause = models.ForeignKey(FailureCode, on_delete=models.PROTECT, related_name="+")
    remedy = models.ForeignKey(FailureCode, on_delete=models.PROTECT, related_name="+")
    actual_root_cause = models.TextField(blank=True)
    rca_verdict = models.CharField(max_length=10, choices=RcaVerdict.choices, db_index=True)
    proposed_failure_mode = models.CharField(max_length=64, blank=True)
    parts_used = models.JSONField(default=list, blank=True, help_text='[{"ref", "qty", "name"}]')
    labour_hours = models.DecimalField(max_digits=6, decimal_places=2)
    technician = models.CharField(max_length=100, blank=True)
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Report WO-{self.work_order_id} ({self.rca_verdict})"


class RcaEvaluation(models.Model):
    """One run of `manage.py eval_rca`: the fault library played through the pipeline and how the
    Investigator's diagnoses scored against the ground truth (workorders/evaluation.py)."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    engine = models.CharField(max_length=32)
    held_out = models.BooleanField(default=False, help_text="The held-out set: other seeds, more noise.")
    repeat = models.PositiveIntegerField(default=1)
    cases = models.PositiveIntegerField(default=0)
    failure_mode_accuracy = models.FloatField(default=0.0)
    evidence_accuracy = models.FloatField(default=0.0)
    similar_failure_accuracy = models.FloatField(default=0.0)
    matrix = models.JSONField(default=dict, blank=True, help_text="{true mode: {predicted mode: count}}")
    results = models.JSONField(default=list, blank=True, help_text="One row per case, with what was predicted.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        kind = "held-out" if self.held_out else "main"
        return f"RCA eval #{self.pk} {self.engine} {kind}: {self.failure_mode_accuracy:.0%}"
