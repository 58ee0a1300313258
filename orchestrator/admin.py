"""The approval console: plans with their steps and interactions; answers go through the service."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from core.access import APPROVER, has_scopes, is_admin
from core.errors import DomainError
from orchestrator.choices import InteractionKind
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.selectors import interactions_visible_to
from orchestrator.services.decision_cards import card_lines
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.plans import plan_cancel


class ApproverConsole:
    """Access by scope, not Django model permissions: staff with the approver scope see plans and
    answer interactions (the service still enforces separation of duties). What a non-admin sees is
    what the API shows them: their own plans and asks, and the plans and asks of the gated approvals
    their scope decides (`interactions_visible_to`) — not every operator's goals, steps and results."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        return qs if is_admin(request.user) else self.seen_by(qs, request.user)

    def seen_by(self, qs: QuerySet, user) -> QuerySet:  # the plan's rows; each model narrows its own
        return qs

    def _approver(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and user.is_staff and has_scopes(user, [APPROVER]))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._approver(request) or super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._approver(request) or super().has_view_permission(request, obj)


class ReadOnlyInline(ApproverConsole, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


def _lines(lines: list[str]) -> str:
    return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines)) or "—"


def result_summary(step: PlanStep) -> str:
    """A step's outcome in one line: the capability's own summary, an RCA, or the error."""
    if step.error:
        return f"error: {step.error}"
    result = step.result if isinstance(step.result, dict) else {}
    if result.get("rca_summary"):
        confidence = result.get("confidence")
        sure = f" (confidence {confidence:.0%})" if isinstance(confidence, int | float) else ""
        return f"WO-{result.get('work_order_id')}: {result['rca_summary']}{sure}"
    return str(result.get("summary") or result.get("title") or ("—" if step.result is None else "done"))[:300]


class PlanStepInline(ReadOnlyInline):
    model = PlanStep
    fields = ("order", "capability", "tier", "status", "attempts", "depends_on", "inputs", "outcome")
    readonly_fields = fields

    @admin.display(description="Result")
    def outcome(self, step: PlanStep) -> str:
        return result_summary(step)


def decision_lines(interaction: Interaction) -> list[str]:
    """What the decider reads: the decision card, or a choice's options."""
    lines = card_lines((interaction.evidence or {}).get("card") or {})
    if interaction.kind == InteractionKind.CHOICE:
        lines.append(f"Options: {', '.join(map(str, interaction.options))}")
        lines.append("Answer with one option: the action 'Answer the selected choice', the Plans page or the API.")
    if interaction.required_scope:
        lines.append(f"Decided by: someone with the {interaction.required_scope} scope, not the plan owner.")
    return lines


class InteractionInline(ReadOnlyInline):
    model = Interaction
    fk_name = "plan"

    def seen_by(self, qs: QuerySet, user) -> QuerySet:
        return qs.filter(pk__in=interactions_visible_to(user).values("pk"))

    fields = ("kind", "step", "question", "decision", "required_scope", "status", "answered_by", "answered_at")
    readonly_fields = fields

    @admin.display(description="Decision card")
    def decision(self, interaction: Interaction) -> str:
        return _lines(decision_lines(interaction))


@admin.register(Plan)
class PlanAdmin(ApproverConsole, admin.ModelAdmin):
    list_display = ("id", "goal", "owner", "status", "autonomy", "planner", "updated_at")
    list_filter = ("status", "autonomy", "planner")
    search_fields = ("goal", "owner__username")
    readonly_fields = [*(f.name for f in Plan._meta.fields), "notes"]
    inlines = [PlanStepInline, InteractionInline]
    actions = ["cancel_plans"]

    def seen_by(self, qs: QuerySet, user) -> QuerySet:
        return qs.filter(Q(owner=user) | Q(pk__in=interactions_visible_to(user).values("plan_id")))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="What the planner could not do / resolved")
    def notes(self, plan: Plan) -> str:
        return _lines([f"{n.get('action')} {n.get('capability') or ''}: {n.get('reason')}" for n in plan.planner_notes])

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        """Cancelling someone's plan is an admin's act, as over the API (where plans are the owner's):
        the approver scope answers asks, it does not stop other people's work."""
        return is_admin(request.user)

    @admin.action(description="Cancel the selected plans", permissions=["cancel"])
    def cancel_plans(self, request: HttpRequest, queryset: QuerySet[Plan]) -> None:
        for plan in queryset:
            try:
                plan_cancel(plan=plan, actor=request.user)
            except DomainError as exc:
                self.message_user(request, f"Plan {plan.pk}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"Plan {plan.pk} cancelled.")


@admin.register(Interaction)
class InteractionAdmin(ApproverConsole, admin.ModelAdmin):
    list_display = (
        "id",
        "plan",
        "kind",
        "question",
        "required_scope",
        "coordinator_approvable",
        "status",
        "answered_by",
        "created_at",
    )
    list_filter = ("status", "kind", "required_scope", "coordinator_approvable")
    readonly_fields = ["decision", *(f.name for f in Interaction._meta.fields)]
    actions = ["approve", "reject", "answer_choice"]

    def seen_by(self, qs: QuerySet, user) -> QuerySet:
        return qs.filter(pk__in=interactions_visible_to(user).values("pk"))

    @admin.display(description="Decision card")
    def decision(self, interaction: Interaction) -> str:
        return _lines(decision_lines(interaction))

    @admin.action(description="Answer the selected choice (pick one option)")
    def answer_choice(self, request: HttpRequest, queryset: QuerySet[Interaction]) -> HttpResponse | None:
        """An intermediate page lists the options; the pick goes through the same service (and the
        same who-may-answer and one-of-the-options checks) as the API."""
        if queryset.count() != 1 or (interaction := queryset.first()) is None or interaction.kind != "choice":
            self.message_user(request, "Select exactly one choice to answer.", messages.ERROR)
            return None
        if "choice" in request.POST:
            try:
                interaction_answer(interaction=interaction, actor=request.user, choice=request.POST["choice"])
            except DomainError as exc:
                self.message_user(request, f"Interaction {interaction.pk}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"Interaction {interaction.pk}: answered {request.POST['choice']}.")
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Answer a choice",
            "interaction": interaction,
            "lines": decision_lines(interaction),
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/orchestrator/interaction/answer_choice.html", context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def _answer(self, request: HttpRequest, queryset: QuerySet[Interaction], decision: str) -> None:
        # Same service, same separation of duties as the API: the owner cannot approve a gated step.
        for interaction in queryset:
            try:
                interaction_answer(interaction=interaction, actor=request.user, decision=decision)
            except DomainError as exc:
                self.message_user(request, f"Interaction {interaction.pk}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"Interaction {interaction.pk}: {decision}d.")

    @admin.action(description="Approve / accept the selected interactions")
    def approve(self, request: HttpRequest, queryset: QuerySet[Interaction]) -> None:
        self._answer(request, queryset, "approve")

    @admin.action(description="Reject the selected interactions")
    def reject(self, request: HttpRequest, queryset: QuerySet[Interaction]) -> None:
        self._answer(request, queryset, "reject")


def _register_more() -> None:
    """Admin pages kept in their own modules register when present (turns: `admin_turns`)."""
    from importlib import import_module  # importlib: optional per-concern admin modules
    from importlib.util import find_spec

    for module in ("admin_turns",):
        if find_spec(f"orchestrator.{module}"):
            import_module(f"orchestrator.{module}")


_register_more()
