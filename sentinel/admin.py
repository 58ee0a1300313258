"""Admin console for the plant, signal thresholds and alarms. Alarm actions call the services
(which write the alarm event and the audit record); a limit edit is recorded by the limits service
(`signal_limits_edited`: audit record, `signal_limits_changed`, re-evaluation), enabling and
disabling a signal is audited here."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from core.access import stored_user
from core.admin import AdminScopeWritesMixin, OperatorChangesMixin
from core.audit import audit_record
from core.errors import DomainError, InvalidInput
from sentinel.connectors import admin as _connectors_admin  # noqa: F401  (registers Connector)
from sentinel.models import Alarm, AlarmEvent, Cell, Line, SignalDefinition, SignalLatest, Site, StaleCondition
from sentinel.services import (
    alarm_acknowledge,
    alarm_put_out_of_service,
    alarm_return_to_service,
    alarm_shelve,
    alarm_unshelve,
    alarms_out_of_service_for_unevaluated,
)
from sentinel.services.alarms import REASON_MAX_LENGTH, required_reason
from sentinel.services.limits import LIMIT_FIELDS, signal_limits_edited
from sentinel.thresholds import Thresholds, limits_problem

THRESHOLD_FIELDS = ("low_alert", "alert", "high_alert", "trip", "deadband", "on_delay_seconds", "enabled")


class SignalLimitsForm(forms.ModelForm):
    """A signal's limits edited in the admin (change form, changelist row, cell inline) obey the rule
    the management-of-change path checks (`sentinel.thresholds.limits_problem`): an alert above its
    trip or a negative deadband is refused on the field, not stored."""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        changed = set(self.changed_data) & set(LIMIT_FIELDS)
        if (self.instance.pk is not None and not changed) or set(self.errors) & set(LIMIT_FIELDS):
            return data
        limits = {name: data[name] if name in data else getattr(self.instance, name) for name in LIMIT_FIELDS}
        problem = limits_problem(Thresholds.of(limits), changed=changed)
        if problem is not None:
            name, message = problem
            self.add_error(name if name in self.fields else None, message.removeprefix(f"{name}: "))
        return data


class LineInline(admin.TabularInline):
    model = Line
    extra = 0


@admin.register(Site)
class SiteAdmin(admin.ModelAdmin):
    search_fields = ["name"]
    inlines = [LineInline]


class CellInline(AdminScopeWritesMixin, admin.TabularInline):
    model = Cell
    extra = 0
    fields = ["tag", "name", "equipment_type", "onboarding_complete"]


@admin.register(Line)
class LineAdmin(admin.ModelAdmin):
    list_display = ["name", "site"]
    list_filter = ["site"]
    search_fields = ["name"]
    inlines = [CellInline]

    def save_formset(self, request, form, formset, change):  # cells added or edited inline: audited
        super().save_formset(request, form, formset, change)
        if formset.model is Cell:
            for cell in formset.new_objects:
                _audit_cell(request, cell, None)
            for cell, fields in formset.changed_objects:
                _audit_cell(request, cell, fields)


CELL_FIELDS = ("line", "tag", "name", "equipment_type", "onboarding_complete")


def _audit_cell(request: HttpRequest, cell: Cell, changed: list[str] | None) -> None:
    """`cell.create` (every field) or `cell.change` (what changed): a cell taken off onboarding_complete
    is no longer evaluated, so none of its signals raises an alarm."""
    fields = list(CELL_FIELDS) if changed is None else [f for f in CELL_FIELDS if f in changed]
    if fields:
        details = {f: cell.line_id if f == "line" else getattr(cell, f) for f in fields}
        action = "cell.create" if changed is None else "cell.change"
        audit_record(actor=request.user, action=action, target_type="sentinel.cell", target_id=cell.pk, details=details)
    if changed is not None and "onboarding_complete" in changed and not cell.onboarding_complete:
        signal_ids = list(cell.signals.values_list("pk", flat=True))
        why = f"cell {cell.tag} taken off onboarding in the admin by {request.user.get_username()}"
        alarms_out_of_service_for_unevaluated(signal_ids=signal_ids, actor=stored_user(request.user), reason=why)


class SignalInline(AdminScopeWritesMixin, admin.TabularInline):
    model = SignalDefinition
    form = SignalLimitsForm
    extra = 0
    fields = ["key", "display_name", "unit", *THRESHOLD_FIELDS]
    show_change_link = True


@admin.register(Cell)
class CellAdmin(AdminScopeWritesMixin, admin.ModelAdmin):
    list_display = ["tag", "name", "equipment_type", "line", "onboarding_complete"]
    list_filter = ["onboarding_complete", "line__site", "line"]
    search_fields = ["tag", "name"]
    inlines = [SignalInline]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        _audit_cell(request, obj, list(form.changed_data) if change else None)

    def save_formset(self, request, form, formset, change):  # signals added, edited, deleted inline: audited
        gone = [f.instance for f in getattr(formset, "deleted_forms", []) if f.instance.pk]
        gone = [(signal.pk, _signal_named(signal)) for signal in gone]  # a deleted row loses its pk
        read = {f.instance.pk: f.initial for f in getattr(formset, "initial_forms", []) if f.instance.pk}
        super().save_formset(request, form, formset, change)
        if formset.model is not SignalDefinition:
            return
        for signal in formset.new_objects:
            _audit_signal(request, "signal.create", signal.pk, _signal_created(signal))
        for signal, fields in formset.changed_objects:
            _audit_threshold_change(request, signal, fields, read.get(signal.pk, {}))
        for pk, named in gone:
            _audit_signal(request, "signal.delete", pk, named)


def _signal_named(signal: SignalDefinition) -> dict[str, Any]:
    return {"cell_tag": signal.cell.tag, "key": signal.key}


def _signal_created(signal: SignalDefinition) -> dict[str, Any]:
    return {**_signal_named(signal), **{f: getattr(signal, f) for f in THRESHOLD_FIELDS}}


def _audit_signal(request: HttpRequest, action: str, pk: int, details: dict[str, Any]) -> None:
    audit_record(actor=request.user, action=action, target_type="sentinel.signal", target_id=pk, details=details)


def _audit_threshold_change(
    request: HttpRequest, signal: SignalDefinition, changed: list[str], read: dict[str, Any]
) -> None:
    """A saved edit of a signal's row (`read`: the form's values before it). Limits changed go
    through `signal_limits_edited` — the `signal.limits_change` record and `signal_limits_changed`
    event the management-of-change path writes, and the re-evaluation — so the Control Room sees
    them from either path. `enabled` is `signal.thresholds_change`; a signal disabled is no longer
    evaluated, so its open alarms go out of service with the reason
    (`alarms_out_of_service_for_unevaluated`)."""
    limits = [f for f in LIMIT_FIELDS if f in changed and f in read]
    if limits:
        why = f"limits edited in the admin by {request.user.get_username()}"
        before = {f: read[f] for f in limits}
        signal_limits_edited(signal=signal.pk, before=before, reason=why, actor=stored_user(request.user))
    fields = [f for f in changed if f in THRESHOLD_FIELDS and f not in LIMIT_FIELDS]
    if fields:
        audit_record(
            actor=request.user,
            action="signal.thresholds_change",
            target_type="sentinel.signal",
            target_id=signal.pk,
            details={f: getattr(signal, f) for f in fields},
        )
    if "enabled" in fields and not signal.enabled:
        why = f"signal {signal.cell.tag} {signal.key} disabled in the admin by {request.user.get_username()}"
        alarms_out_of_service_for_unevaluated(signal_ids=[signal.pk], actor=stored_user(request.user), reason=why)


@admin.register(SignalDefinition)
class SignalDefinitionAdmin(AdminScopeWritesMixin, admin.ModelAdmin):
    form = SignalLimitsForm
    list_display = ["__str__", "display_name", "unit", *THRESHOLD_FIELDS]
    list_editable = list(THRESHOLD_FIELDS)
    list_filter = ["enabled", "cell__line", "cell"]
    search_fields = ["key", "display_name", "cell__tag"]
    list_select_related = ["cell"]

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[forms.ModelForm]:
        return super().get_changelist_form(request, form=SignalLimitsForm, **kwargs)  # the rows' edits too

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change:
            _audit_threshold_change(request, obj, list(form.changed_data), form.initial)
        else:
            _audit_signal(request, "signal.create", obj.pk, _signal_created(obj))

    def delete_model(self, request: HttpRequest, obj: SignalDefinition) -> None:
        _audit_signal(request, "signal.delete", obj.pk, _signal_named(obj))
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[SignalDefinition]) -> None:
        """The list's "Delete selected" bypasses delete_model: each signal is audited here."""
        with transaction.atomic():
            for signal in queryset.select_related("cell").order_by("pk"):
                _audit_signal(request, "signal.delete", signal.pk, _signal_named(signal))
            super().delete_queryset(request, queryset)


@admin.register(SignalLatest)
class SignalLatestAdmin(admin.ModelAdmin):
    list_display = ["signal", "value", "time", "breach_since", "stale"]
    list_filter = ["stale"]
    list_select_related = ["signal__cell"]
    search_fields = ["signal__key", "signal__cell__tag"]

    def has_add_permission(self, request):  # written by ingest only
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):  # the evaluation's state: deleting it resets a breach timer
        return False


class AlarmEventInline(admin.TabularInline):
    model = AlarmEvent
    extra = 0
    can_delete = False
    readonly_fields = ("created_at", "from_state", "to_state", "actor", "comment", "details")
    fields = readonly_fields

    def has_add_permission(self, request, obj=None):  # append-only, through the services
        return False


def _reason(request: HttpRequest) -> str:
    """The actions bar's reason field (AlarmActionForm); the services decide whether it may be blank."""
    return str(request.POST.get("comment", ""))


def _required_reason(modeladmin: admin.ModelAdmin, request: HttpRequest, verb: str) -> str | None:
    """The reason checked once, by the services' own rule, before any alarm moves; refused in the
    words of the field the page shows ("Reason"), not the API's `comment`."""
    try:
        return required_reason(_reason(request), verb=verb)
    except InvalidInput as exc:
        said = exc.message.removeprefix("comment: ")
        modeladmin.message_user(request, f"Reason: {said} No alarm was changed.", messages.ERROR)
        return None


def _run(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Alarm], verb: str, action) -> None:
    done, failed = 0, []
    for alarm in queryset.order_by("pk"):
        try:
            action(alarm)
            done += 1
        except DomainError as exc:
            failed.append(f"#{alarm.pk}: {exc.message}")
    if done:
        modeladmin.message_user(request, f"{verb}: {done} alarm(s).", messages.SUCCESS)
    if failed:
        modeladmin.message_user(request, "Skipped " + "; ".join(failed), messages.WARNING)


class AlarmActionForm(ActionForm):
    """The actions bar's reason: required by shelve and out of service (the services refuse a blank
    one, naming `comment`), optional for acknowledge / unshelve."""

    comment = forms.CharField(
        required=False,
        max_length=REASON_MAX_LENGTH,
        label="Reason",
        help_text="Required to shelve or put out of service.",
    )


@admin.register(Alarm)
class AlarmAdmin(OperatorChangesMixin, admin.ModelAdmin):
    list_display = ["pk", "signal", "state", "severity", "direction", "value", "peak_value", "raised_at"]
    list_filter = ["state", "severity", "direction", "signal__cell"]
    search_fields = ["signal__key", "signal__display_name", "signal__cell__tag", "acknowledge_comment"]
    list_select_related = ["signal__cell"]
    date_hierarchy = "raised_at"
    inlines = [AlarmEventInline]
    actions = ["acknowledge", "shelve_one_hour", "unshelve", "put_out_of_service", "return_to_service"]
    action_form = AlarmActionForm
    readonly_fields = [f.name for f in Alarm._meta.fields]

    def has_add_permission(self, request):  # alarms are raised by sentinel, never typed in
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def response_action(
        self, request: HttpRequest, queryset: QuerySet[Any], *args: Any, **kwargs: Any
    ) -> HttpResponse | None:
        """Django answers an invalid actions bar with "No action selected."; a Reason that is too
        long is said as such, and nothing runs."""
        form = self.action_form(request.POST, auto_id=False)
        cast(forms.ChoiceField, form.fields["action"]).choices = self.get_action_choices(request)
        if not form.is_valid() and set(form.errors) == {"comment"}:
            said = " ".join(str(e) for e in form.errors["comment"])
            self.message_user(request, f"Reason: {said} No alarm was changed.", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
        return super().response_action(request, queryset, *args, **kwargs)

    @admin.action(description="Acknowledge selected alarms", permissions=["change"])
    def acknowledge(self, request, queryset):
        comment = _reason(request)
        _run(
            self,
            request,
            queryset,
            "Acknowledged",
            lambda a: alarm_acknowledge(alarm=a, actor=request.user, comment=comment),
        )

    @admin.action(description="Shelve selected alarms for 1 hour (reason required)", permissions=["change"])
    def shelve_one_hour(self, request, queryset):
        comment = _required_reason(self, request, "shelved")
        if comment is None:
            return
        _run(
            self,
            request,
            queryset,
            "Shelved",
            lambda a: alarm_shelve(alarm=a, actor=request.user, minutes=60, comment=comment),
        )

    @admin.action(description="Unshelve selected alarms", permissions=["change"])
    def unshelve(self, request, queryset):
        comment = _reason(request)
        _run(
            self, request, queryset, "Unshelved", lambda a: alarm_unshelve(alarm=a, actor=request.user, comment=comment)
        )

    @admin.action(description="Put selected alarms out of service (reason required)", permissions=["change"])
    def put_out_of_service(self, request, queryset):
        comment = _required_reason(self, request, "put out of service")
        if comment is None:
            return
        _run(
            self,
            request,
            queryset,
            "Out of service",
            lambda a: alarm_put_out_of_service(alarm=a, actor=request.user, comment=comment),
        )

    @admin.action(description="Return selected alarms to service", permissions=["change"])
    def return_to_service(self, request, queryset):
        comment = _reason(request)
        _run(
            self,
            request,
            queryset,
            "Returned to service",
            lambda a: alarm_return_to_service(alarm=a, actor=request.user, comment=comment),
        )


@admin.register(StaleCondition)
class StaleConditionAdmin(admin.ModelAdmin):
    list_display = ["signal", "raised_at", "cleared_at"]
    list_filter = [("cleared_at", admin.EmptyFieldListFilter)]
    list_select_related = ["signal__cell"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):  # the history of a signal's silences, kept
        return False
