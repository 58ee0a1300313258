"""Kernel admin: API tokens (raw secret shown once), service accounts, and read-only records.

The audit trail, the event outbox and agent runs are evidence: the admin shows them and
never lets anyone add, change or delete them.

People's conversations (chat and authoring sessions, coordinator turns, their agent runs) and
who may act on ARIA (API tokens, service accounts) are admin-only: `AdminScopeOnlyMixin` decides by the admin scope, never by Django model permissions
alone, so an approver (staff, with the seeded view permissions) does not read other people's
transcripts; agent runs, the event outbox's private copies and the audit records that carry a
person's conversation or plan are owner-scoped for non-admins (`runs_seen_by`, `events_seen_by`,
`audit_seen_by`).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from core.access import OPERATOR, has_scopes, is_admin
from core.audit import audit_record
from core.models import AgentRun, AgentStep, ApiToken, AuditRecord, Event, ServiceAccount
from core.tokens import api_token_create, api_token_revoke


class ReadOnlyAdminMixin:
    """View only: no add, change or delete, for anyone (superusers included)."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def admin_staff(request: HttpRequest) -> bool:
    """An active staff user with the admin scope (superuser or the admin group)."""
    user = request.user
    return bool(user.is_active and user.is_staff and is_admin(user))


class AdminScopeWritesMixin:
    """Add, change and delete need the admin scope (`admin_staff`) as well as the model permission;
    reading follows the model's view permission. For governance rows the approver's console shows
    but only an administrator sets: a signal's limits, a cell, the connectors (sentinel.admin)."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return admin_staff(request) and super().has_add_permission(request, *args)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_staff(request) and super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_staff(request) and super().has_delete_permission(request, obj)  # type: ignore[misc]


class AdminScopeOnlyMixin(AdminScopeWritesMixin):
    """Shown only to `admin_staff`, whatever model permissions a group holds: people's transcripts
    (sessions, messages, runs, held tool calls, coordinator turns) and the identities that act on
    ARIA (API tokens, service accounts). Writes need the admin scope as well as the model
    permission the admin class grants (none for the read-only transcripts)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return admin_staff(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_staff(request)


class OperatorChangesMixin:
    """Plant records (alarms, work orders) change in the admin only for who may change them over
    the API: the model's change permission and the operator scope. Every admin action on them
    declares `permissions=["change"]`, so without both it is neither offered nor run (Django runs an
    action that declares no permission for anyone who can open the list)."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_change_permission(request, obj)  # type: ignore[misc]
        return bool(allowed and has_scopes(request.user, (OPERATOR,)))


def runs_seen_by(queryset: QuerySet, request: HttpRequest, *, user_field: str = "user") -> QuerySet:
    """Agent runs (or their steps) a non-admin may read in the admin: their own and the system's
    (no user, or a service account: scans, investigations, repair orders), never another person's
    chat or coordinator run."""
    if admin_staff(request):
        return queryset
    return queryset.filter(
        Q(**{user_field: request.user})
        | Q(**{f"{user_field}__isnull": True})
        | Q(**{f"{user_field}__service_account__isnull": False})
    )


# Audit actions whose details carry a person's own conversation or private plan: a chat's held tool
# call (its arguments and result), a workbench operation (intent, result), a plan and its asks (goal,
# guidance) — as private in the audit trail as the objects themselves.
PERSONAL_AUDIT_ACTIONS = ("assistant.tool_call.", "assistant.operation", "plan.", "interaction.")


def audit_seen_by(queryset: QuerySet[AuditRecord], request: HttpRequest) -> QuerySet[AuditRecord]:
    """Audit records a non-admin may read in the admin: all but another person's
    `PERSONAL_AUDIT_ACTIONS` (theirs, and those of no one or a service account, stay)."""
    if admin_staff(request):
        return queryset
    personal = Q()
    for prefix in PERSONAL_AUDIT_ACTIONS:
        personal |= Q(action__startswith=prefix)
    people_else = Q(actor__isnull=False, actor__service_account__isnull=True) & ~Q(actor=request.user)
    return queryset.exclude(personal & people_else)


def events_seen_by(queryset: QuerySet[Event], request: HttpRequest) -> QuerySet[Event]:
    """Outbox rows a non-admin may read in the admin: public events, their own private copies and
    the service accounts', never the copy another person's socket got (their chat's tool calls,
    thinking, plans) — the rule `runs_seen_by` keeps for runs."""
    if admin_staff(request):
        return queryset
    services = list(ServiceAccount.objects.values_list("user_id", flat=True))
    return queryset.filter(
        Q(payload__owner_id__isnull=True) | Q(payload__owner_id=request.user.pk) | Q(payload__owner_id__in=services)
    )


@admin.register(ApiToken)
class ApiTokenAdmin(AdminScopeOnlyMixin, admin.ModelAdmin):
    list_display = ("name", "user", "key_prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "key_prefix")
    list_select_related = ("user",)
    fields = ("user", "name", "key_prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("key_prefix", "created_at", "last_used_at", "revoked_at")
    raw_id_fields = ("user",)
    actions = ("revoke_tokens",)

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        return ("user", "name") if obj is None else self.fields

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        # An issued token is immutable; to change it, revoke it and create another.
        return self.fields if obj is not None else ()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead, so the record of the token stays

    def save_model(self, request: HttpRequest, obj: ApiToken, form: ModelForm, change: bool) -> None:
        if change:
            return
        token, raw = api_token_create(user=obj.user, name=obj.name, actor=request.user)
        obj.pk, obj.key_prefix, obj.key_hash, obj.created_at = (
            token.pk,
            token.key_prefix,
            token.key_hash,
            token.created_at,
        )
        obj._state.adding = False
        messages.warning(
            request,
            f"API token for {token.user.get_username()}: {raw} — copy it now; it will not be shown again.",
        )

    @admin.action(description="Revoke selected tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = sum(api_token_revoke(token=token, actor=request.user) for token in queryset.select_related("user"))
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)


@admin.register(ServiceAccount)
class ServiceAccountAdmin(AdminScopeOnlyMixin, admin.ModelAdmin):
    list_display = ("user", "role", "description")
    list_filter = ("role",)
    search_fields = ("user__username", "description")
    list_select_related = ("user",)
    raw_id_fields = ("user",)

    def save_model(self, request: HttpRequest, obj: ServiceAccount, form: ModelForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        audit_record(
            actor=request.user,
            action="service_account.change" if change else "service_account.create",
            target_type="service_account",
            target_id=obj.pk,
            details={"user": obj.user.get_username(), "role": obj.role},
        )

    def delete_model(self, request: HttpRequest, obj: ServiceAccount) -> None:
        audit_record(
            actor=request.user,
            action="service_account.delete",
            target_type="service_account",
            target_id=obj.pk,
            details={"user": obj.user.get_username(), "role": obj.role},
        )
        super().delete_model(request, obj)


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    # `seal`: the chain position (empty until the sealer links the record, core.audit).
    list_display = ("id", "seal", "created_at", "actor_label", "action", "target_type", "target_id")
    list_filter = ("action", "target_type")
    search_fields = ("actor_label", "action", "target_type", "target_id")
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditRecord]:
        return audit_seen_by(super().get_queryset(request), request)


@admin.register(Event)
class EventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("id", "type", "turn_id", "created_at")
    list_filter = ("type",)
    search_fields = ("type", "turn_id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Event]:
        return events_seen_by(super().get_queryset(request), request)


class AgentStepInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = AgentStep
    extra = 0
    fields = ("index", "kind", "tool", "args", "result_summary", "is_error", "error", "duration_ms")
    readonly_fields = fields
    ordering = ("index",)


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "agent",
        "status",
        "finish_reason",
        "engine",
        "model",
        "tool_calls",
        "duration_ms",
        "started_at",
    )
    list_filter = ("agent", "status", "finish_reason", "engine")
    search_fields = ("agent", "turn_id", "subject_type", "subject_id")
    inlines = (AgentStepInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentRun]:
        return runs_seen_by(super().get_queryset(request), request)


@admin.register(AgentStep)
class AgentStepAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("id", "run", "index", "kind", "tool", "is_error", "duration_ms")
    list_filter = ("kind", "is_error")
    search_fields = ("tool",)
    list_select_related = ("run",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentStep]:
        return runs_seen_by(super().get_queryset(request), request, user_field="run__user")
