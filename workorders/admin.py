"""The human console for work orders, failure history, KB, logbook, shifts and production.

Work-order changes go through the services (lifecycle map, events, audit), never a bare save.
"""

import math
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import OperatorChangesMixin, ReadOnlyAdminMixin
from core.audit import audit_record
from core.errors import DomainError, InvalidInput
from workorders.choices import CLOSED_STATUSES, WorkOrderStatus
from workorders.models import (
    EquipmentKB,
    FailureHistory,
    LogbookEntry,
    ProductionRecord,
    ShiftAssignment,
    WorkOrder,
    WorkOrderEvent,
)
from workorders.services import equipment_kb_update, work_order_transition, work_order_update
from workorders.services.edits import EDITABLE_FIELDS
from workorders.shapes import WORK_ORDER_LISTS, kb_data_check, work_order_list_clean


class WorkOrderEventInline(admin.TabularInline):
    model = WorkOrderEvent
    extra = 0
    can_delete = False
    fields = ("created_at", "from_status", "to_status", "actor", "note")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _transition_action(to_status: str, label: str):
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[WorkOrder]) -> None:
        done, failed = 0, []
        for pk in queryset.order_by("pk").values_list("pk", flat=True):
            try:
                work_order_transition(work_order=pk, to_status=to_status, actor=request.user, note="admin action")
                done += 1
            except DomainError as exc:
                failed.append(f"WO-{pk}: {exc.message} Allowed: {', '.join(exc.extra.get('allowed', [])) or 'none'}")
        if done:
            modeladmin.message_user(request, f"{label}: {done} work order(s).", messages.SUCCESS)
        for message in failed:
            modeladmin.message_user(request, message, messages.ERROR)

    action.__name__ = f"mark_{to_status}"
    return admin.action(description=f"{label} selected work orders", permissions=["change"])(action)


class WorkOrderAdminForm(forms.ModelForm):
    class Meta:
        model = WorkOrder
        fields = sorted(EDITABLE_FIELDS)  # the admin passes its own list; these are the editable ones

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        # The same shapes as the API and the Generator: a form error here, not a saved "str" the
        # Control Room cannot map over (nor a 1e400 the database refuses with a 500).
        for name in sorted(WORK_ORDER_LISTS.keys() & set(self.changed_data)):
            if name in data:
                try:
                    data[name] = work_order_list_clean(name, data[name])
                except InvalidInput as exc:
                    self.add_error(name, exc.message)
        start, end = data.get("suggested_window_start"), data.get("suggested_window_end")
        if start is not None and end is not None and end <= start:
            self.add_error("suggested_window_end", "The window must end after it starts.")
        return data


class WorkOrderRcaForm(WorkOrderAdminForm):
    """A `detected` order also takes the root cause a person found; saving it moves the order on."""

    class Meta(WorkOrderAdminForm.Meta):
        fields = sorted(EDITABLE_FIELDS | {"rca_summary"})
        help_texts = {"rca_summary": "Recording the root cause moves the order to analyzed and queues the Generator."}


@admin.register(WorkOrder)
class WorkOrderAdmin(OperatorChangesMixin, admin.ModelAdmin):
    form = WorkOrderAdminForm
    list_display = ("id", "cell", "title", "status", "priority", "confidence", "generated_by_agent", "created_at")
    list_filter = ("status", "priority", "cell", "generated_by_agent")
    search_fields = ("title", "description", "rca_summary", "cell__tag", "cell__name")
    list_select_related = ("cell",)
    date_hierarchy = "created_at"
    inlines = [WorkOrderEventInline]
    actions = [
        _transition_action("in_progress", "Start"),
        _transition_action("completed", "Complete"),
        _transition_action("cancelled", "Cancel"),
    ]
    readonly_fields = (
        "cell",
        "status",
        "rca_summary",
        "rca_details",
        "confidence",
        "trigger_anomaly_time",
        "triggered_by_signal_def",
        "triggered_by_alarm",
        "generated_by_agent",
        "created_at",
        "updated_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # work orders come from alarms (or the API); the admin edits and moves them

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # an order and its audited history stay; cancel it instead

    def has_change_permission(self, request: HttpRequest, obj: WorkOrder | None = None) -> bool:
        # A closed order's record is not edited (the service refuses it): its page is view only,
        # rather than a form whose save said "changed successfully" beside the refusal.
        closed = obj is not None and obj.status in CLOSED_STATUSES
        return not closed and super().has_change_permission(request, obj)

    def _takes_rca(self, obj: WorkOrder | None) -> bool:
        return obj is not None and obj.status == WorkOrderStatus.DETECTED

    def get_form(self, request: HttpRequest, obj: WorkOrder | None = None, change: bool = False, **kwargs: Any):
        if self._takes_rca(obj):
            kwargs["form"] = WorkOrderRcaForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: WorkOrder | None = None) -> tuple[str, ...]:
        fields = tuple(super().get_readonly_fields(request, obj))
        return tuple(f for f in fields if f != "rca_summary") if self._takes_rca(obj) else fields

    def save_model(self, request: HttpRequest, obj: WorkOrder, form: Any, change: bool) -> None:
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in EDITABLE_FIELDS}
        rca_summary = (form.cleaned_data.get("rca_summary") or "").strip() if "rca_summary" in form.changed_data else ""
        try:
            # One service call: the plan edits and, with a root cause, the move to analyzed.
            work_order_update(
                work_order=obj.pk,
                actor=request.user,
                changes=changes,
                to_status=WorkOrderStatus.ANALYZED if rca_summary else None,
                rca_summary=rca_summary or None,
                note="admin RCA" if rca_summary else "admin edit",
            )
        except DomainError as exc:
            self.message_user(request, f"WO-{obj.pk}: {exc.message}", messages.ERROR)


class FailureHistoryAdminForm(forms.ModelForm):
    class Meta:
        model = FailureHistory
        fields = (
            "cell",
            "failure_time",
            "resolved_time",
            "failure_mode",
            "root_cause",
            "signal_patterns",
            "work_order",
            "verification",
            "confirmed_failure_mode",
            "confirmed_root_cause",
            "confirmed_by",
            "confirmed_at",
        )

    def clean_signal_patterns(self) -> Any:
        """The shape the Investigator's pattern match reads: {signal key: {peak, duration_min, …}}
        with finite numbers (a list or a bare number there broke the match for the whole cell)."""
        value = self.cleaned_data.get("signal_patterns")
        if value is None:
            return {}
        rows = value.items() if isinstance(value, dict) else None
        if rows is None or not all(
            isinstance(row, dict)
            and all(isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) for n in row.values())
            for _, row in rows
        ):
            raise forms.ValidationError('An object of signal keys, each {"peak": number, "duration_min": number}.')
        return value


@admin.register(FailureHistory)
class FailureHistoryAdmin(admin.ModelAdmin):
    """The plant's failure history (the agents' memory, MTBF/MTTR): an admin enters what happened
    before ARIA and corrects a row; every add, change and delete is an audit record."""

    form = FailureHistoryAdminForm
    list_display = ("id", "cell", "failure_mode", "failure_time", "resolved_time", "work_order")
    list_filter = ("failure_mode", "cell")
    search_fields = ("failure_mode", "root_cause", "cell__tag")
    list_select_related = ("cell", "work_order")
    date_hierarchy = "failure_time"
    raw_id_fields = ("work_order",)

    def save_model(self, request: HttpRequest, obj: FailureHistory, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        action = "failure_history.admin_change" if change else "failure_history.admin_add"
        self._audit(request, obj, action, fields=sorted(form.changed_data))

    def delete_model(self, request: HttpRequest, obj: FailureHistory) -> None:
        self._audit(request, obj, "failure_history.admin_delete")
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[FailureHistory]) -> None:
        for obj in queryset.order_by("pk"):
            self._audit(request, obj, "failure_history.admin_delete")
        super().delete_queryset(request, queryset)

    def _audit(self, request: HttpRequest, obj: FailureHistory, action: str, **details: Any) -> None:
        audit_record(
            actor=request.user,
            action=action,
            target_type="failure_history",
            target_id=obj.pk,
            details={"cell_id": obj.cell_id, "failure_mode": obj.failure_mode, **details},
        )


class EquipmentKBAdminForm(forms.ModelForm):
    class Meta:
        model = EquipmentKB
        fields = ("cell", "data")

    def clean_data(self) -> Any:
        data = self.cleaned_data.get("data")
        if data is None:  # an emptied field: an empty KB, as the model's default
            return {}
        if not isinstance(data, dict):
            raise forms.ValidationError("The KB must be a JSON object.")
        try:
            kb_data_check(data)  # the shape the agents and the parts service read
        except InvalidInput as exc:
            raise forms.ValidationError(exc.message) from None
        return data


@admin.register(EquipmentKB)
class EquipmentKBAdmin(admin.ModelAdmin):
    form = EquipmentKBAdminForm
    list_display = ("cell", "updated_at")
    search_fields = ("cell__tag", "cell__name")
    readonly_fields = ("calibration_log", "updated_at")
    list_select_related = ("cell",)

    def save_model(self, request: HttpRequest, obj: EquipmentKB, form: Any, change: bool) -> None:
        # The service replaces the data, appends the calibration log and audits the edit.
        equipment_kb_update(cell=obj.cell, patch=obj.data or {}, actor=request.user, note="admin edit", replace=True)


@admin.register(LogbookEntry)
class LogbookEntryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read only: the logbook is append-only, written on the Shift page (audited, on the bus)."""

    list_display = ("time", "cell", "author", "shift", "category", "text")
    list_filter = ("cell", "shift", "category")
    search_fields = ("text", "author", "cell__tag")
    date_hierarchy = "time"


@admin.register(ShiftAssignment)
class ShiftAssignmentAdmin(admin.ModelAdmin):
    list_display = ("date", "shift", "technician", "role", "line", "starts_at", "ends_at")
    list_filter = ("shift", "role", "line")
    search_fields = ("technician", "role")
    date_hierarchy = "date"


@admin.register(ProductionRecord)
class ProductionRecordAdmin(admin.ModelAdmin):
    list_display = ("date", "shift", "cell", "planned_time_min", "run_time_min", "total_count", "good_count")
    list_filter = ("cell", "shift")
    date_hierarchy = "date"
