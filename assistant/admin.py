"""The human console of the assistant: drafts (approve / reject / publish through the same
services, so separation of duties holds here too), reviews, prompt versions and aliases (move =
rollback), skills, published artifacts. History is read-only. The runtime config
(governance settings) is shown to approvers and changed only by an admin, through the audited
service. People's sessions, messages, attachments, operations, runs and held tool calls are their
transcripts: admin-only (core.admin.AdminScopeOnlyMixin), not part of the approver console."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from assistant.choices import DraftType
from assistant.models import (
    Attachment,
    Draft,
    Message,
    Operation,
    PendingToolCall,
    PromptAlias,
    PromptVersion,
    PublishedArtifact,
    Review,
    Run,
    RuntimeConfig,
    Session,
    Skill,
)
from assistant.publishers import MCP_DEFAULT_TIER, mcp_tools_of
from assistant.services.config import config_update, config_validate
from assistant.services.drafts import MCP_REVIEW_TIERS, draft_approve, draft_reject
from assistant.services.publish import draft_publish, prompt_alias_move, prompt_alias_remove
from core.access import APPROVER, has_scopes
from core.admin import AdminScopeOnlyMixin, admin_staff
from core.audit import audit_record
from core.errors import DomainError, InvalidInput


class ApproverConsole:
    """Access by scope, not Django model permissions: staff with the approver scope see these
    pages and run their actions (the services still enforce separation of duties)."""

    def _approver(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and user.is_staff and has_scopes(user, [APPROVER]))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._approver(request) or super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._approver(request) or super().has_view_permission(request, obj)


class ReadOnly:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _each(request: HttpRequest, queryset: QuerySet, label: str, service) -> None:
    done, failed = 0, []
    for obj in queryset.order_by("pk"):
        try:
            service(obj)
            done += 1
        except DomainError as exc:
            failed.append(f"#{obj.pk}: {exc.message}")
    if done:
        messages.success(request, f"{label}: {done} done.")
    for failure in failed:
        messages.error(request, f"{label} refused {failure}")


def _tool_rows(draft: Draft) -> list[dict[str, str]]:
    """An MCP draft's tools with the tier preselected: the one its spec declares, else mutate."""
    return [
        {
            "name": str(tool.get("name")),
            "tier": str(tool.get("tier") or MCP_DEFAULT_TIER.label),
            "description": str(tool.get("description") or "")[:200],
        }
        for tool in mcp_tools_of(draft.spec, draft.test_report)
        if isinstance(tool, dict)
    ]


class ReviewInline(ApproverConsole, ReadOnly, admin.TabularInline):
    model = Review
    extra = 0
    fields = (
        "created",
        "kind",
        "reviewer",
        "decision",
        "confidence",
        "policy_version",
        "candidate_version",
        "cleared",
        "expires_at",
        "reason",
        "tool_tiers",
    )
    readonly_fields = fields


@admin.register(Draft)
class DraftAdmin(ApproverConsole, admin.ModelAdmin):
    list_display = ("id", "type", "name", "version", "status", "owner", "updated")
    list_filter = ("status", "type")
    search_fields = ("name", "owner__username")
    list_select_related = ("owner",)
    readonly_fields = (
        "owner", "session", "type", "name", "spec", "status", "validation_report", "test_report",
        "content_hash", "version", "created", "updated",
    )  # fmt: skip
    inlines = [ReviewInline]
    actions = ("approve", "reject", "publish")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # drafts are authored through the assistant

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Approve (manual policy; approver, not the author; MCP: choose tool tiers)")
    def approve(self, request: HttpRequest, queryset: QuerySet[Draft]) -> TemplateResponse | None:
        """Two steps, as the drawer's Approve: a page names each candidate (version and content hash;
        an MCP server's tools with a tier to pick), then "apply" approves exactly those candidates
        (`draft_approve(candidate_hash=…)`). A draft its author changed in between is refused
        (candidate_changed), never approved unseen."""
        drafts = list(queryset.order_by("pk"))
        if "apply" not in request.POST:
            rows = [{"draft": d, "tools": _tool_rows(d) if d.type == DraftType.MCP_SERVER else None} for d in drafts]
            context = {**self.admin_site.each_context(request), "rows": rows, "tiers": MCP_REVIEW_TIERS}
            context["selected"] = [d.pk for d in drafts]
            context["servers"] = any(row["tools"] is not None for row in rows)
            context["title"] = "Approve these candidates"
            return TemplateResponse(request, "admin/assistant/draft/approve.html", context)

        def approve_one(draft: Draft) -> Draft:
            read = request.POST.get(f"hash:{draft.pk}", "")
            if not read:
                raise InvalidInput("open the approval page and read the candidate first.", field="candidate_hash")
            prefix = f"tier:{draft.pk}:"
            tiers = {k.removeprefix(prefix): v for k, v in request.POST.items() if k.startswith(prefix)}
            return draft_approve(
                draft=draft, actor=request.user, reason="admin", tool_tiers=tiers or None, candidate_hash=read
            )

        _each(request, queryset, "Approve", approve_one)
        return None

    @admin.action(description="Reject")
    def reject(self, request: HttpRequest, queryset: QuerySet[Draft]) -> None:
        _each(
            request,
            queryset,
            "Reject",
            lambda d: draft_reject(draft=d, actor=request.user, reason="Rejected in the admin."),
        )

    @admin.action(description="Publish (approver or release; not the author or the approver)")
    def publish(self, request: HttpRequest, queryset: QuerySet[Draft]) -> None:
        _each(request, queryset, "Publish", lambda d: draft_publish(draft=d, actor=request.user))


@admin.register(Review)
class ReviewAdmin(ApproverConsole, ReadOnly, admin.ModelAdmin):
    list_display = (
        "id",
        "draft",
        "kind",
        "reviewer",
        "decision",
        "confidence",
        "policy_version",
        "cleared",
        "created",
        "expires_at",
    )
    list_filter = ("kind", "decision", "cleared")
    list_select_related = ("draft", "reviewer")


@admin.register(PromptVersion)
class PromptVersionAdmin(ApproverConsole, ReadOnly, admin.ModelAdmin):
    list_display = ("name", "version", "created_by", "created")
    list_filter = ("name",)
    actions = ("make_production",)

    @admin.action(description="Move the production alias here (rollback / roll forward)")
    def make_production(self, request: HttpRequest, queryset: QuerySet[PromptVersion]) -> None:
        _each(
            request,
            queryset,
            "Move alias",
            lambda v: prompt_alias_move(name=v.name, version=v.version, actor=request.user),
        )


@admin.register(PromptAlias)
class PromptAliasAdmin(ApproverConsole, ReadOnly, admin.ModelAdmin):
    list_display = ("name", "alias", "version", "updated")
    list_select_related = ("version",)
    actions = ("remove_alias",)

    @admin.action(description="Remove the alias (back to the built-in prompt)")
    def remove_alias(self, request: HttpRequest, queryset: QuerySet[PromptAlias]) -> None:
        _each(
            request,
            queryset,
            "Remove alias",
            lambda a: prompt_alias_remove(name=a.name, alias=a.alias, actor=request.user),
        )


@admin.register(Skill)
class SkillAdmin(ApproverConsole, admin.ModelAdmin):
    list_display = ("name", "runtime_mode", "version", "updated")
    list_filter = ("runtime_mode",)
    search_fields = ("name",)
    fields = ("name", "description", "instructions", "runtime_mode", "triggers", "version")
    readonly_fields = ("version",)

    def save_model(self, request: HttpRequest, obj: Skill, form: Any, change: bool) -> None:
        if change:
            obj.version += 1
        super().save_model(request, obj, form, change)
        audit_record(
            actor=request.user,
            action="skill.change" if change else "skill.create",
            target_type="assistant.skill",
            target_id=obj.pk,
            details={"name": obj.name, "version": obj.version, "runtime_mode": obj.runtime_mode},
        )

    def delete_model(self, request: HttpRequest, obj: Skill) -> None:
        audit_record(
            actor=request.user,
            action="skill.delete",
            target_type="assistant.skill",
            target_id=obj.pk,
            details={"name": obj.name},
        )
        super().delete_model(request, obj)


@admin.register(PublishedArtifact)
class PublishedArtifactAdmin(ApproverConsole, ReadOnly, admin.ModelAdmin):
    list_display = ("type", "name", "version", "active", "published_by", "created")
    list_filter = ("type", "active")


@admin.register(Run)
class RunAdmin(AdminScopeOnlyMixin, ReadOnly, admin.ModelAdmin):
    list_display = ("id", "session", "mode", "engine", "model", "status", "tokens", "duration_ms", "created")
    list_filter = ("status", "mode", "engine")


@admin.register(PendingToolCall)
class PendingToolCallAdmin(AdminScopeOnlyMixin, ReadOnly, admin.ModelAdmin):
    """Build mode's held changes and what their owners decided (read-only: only the owner decides;
    admin-only: the arguments come from the owner's session)."""

    list_display = ("id", "session", "tool_name", "tier", "status", "decided_by", "decided_at", "created")
    list_filter = ("status", "tier")
    search_fields = ("tool_name", "session__owner__username")
    list_select_related = ("session", "decided_by")


class MessageInline(AdminScopeOnlyMixin, ReadOnly, admin.TabularInline):
    model = Message
    extra = 0
    fields = ("created", "role", "content")
    readonly_fields = fields


@admin.register(Session)
class SessionAdmin(AdminScopeOnlyMixin, ReadOnly, admin.ModelAdmin):
    list_display = ("id", "owner", "title", "archived", "updated")
    list_filter = ("archived",)
    search_fields = ("title", "owner__username")
    inlines = [MessageInline]


@admin.register(Attachment)
class AttachmentAdmin(AdminScopeOnlyMixin, ReadOnly, admin.ModelAdmin):
    list_display = ("id", "session", "kind", "name", "size", "truncated", "created")
    list_filter = ("kind",)


@admin.register(Operation)
class OperationAdmin(AdminScopeOnlyMixin, ReadOnly, admin.ModelAdmin):
    list_display = ("id", "owner", "intent", "status", "created", "executed_at")
    list_filter = ("intent", "status")


class RuntimeConfigForm(forms.ModelForm):
    """The stored settings as one JSON object, checked against the same bounds as the API."""

    data = forms.JSONField(
        required=False, help_text="Only the settings that differ from the defaults; {} for all defaults."
    )

    class Meta:
        model = RuntimeConfig
        fields = ("data",)

    def clean_data(self) -> dict[str, Any]:
        data = self.cleaned_data.get("data")
        if not isinstance(data, dict):  # null or [] would otherwise empty the whole config
            raise forms.ValidationError("The settings must be a JSON object ({} for all defaults).")
        base = dict(getattr(settings, "ARIA_ASSISTANT", {}) or {})
        try:
            config_validate({**base, **data})
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from None
        return data


@admin.register(RuntimeConfig)
class RuntimeConfigAdmin(ApproverConsole, admin.ModelAdmin):
    """Approvers read the governance settings; only an admin changes them (audited service)."""

    form = RuntimeConfigForm
    list_display = ("__str__", "updated")
    readonly_fields = ("updated",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return admin_staff(request) and not RuntimeConfig.objects.filter(pk=1).exists()

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_staff(request)  # never from Django model permissions alone

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # going back to defaults is a change (empty object), audited like any other

    def save_model(self, request: HttpRequest, obj: RuntimeConfig, form: Any, change: bool) -> None:
        config_update(actor=request.user, changes=form.cleaned_data["data"], replace=True)
        obj.pk = 1
        obj.refresh_from_db()
