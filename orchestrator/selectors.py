"""Reads that depend on who asks: owner-scoped plans, interactions a viewer may see or answer."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, Q, QuerySet

from core.access import get_owned_or_404, is_service_account, owned_by, user_scopes
from core.errors import NotFound
from orchestrator.choices import PLAN_FINISHED, InteractionStatus
from orchestrator.models import Interaction, Plan, PlanStep


def plans_for(user: AbstractBaseUser) -> QuerySet[Plan]:
    return owned_by(Plan.objects.select_related("owner"), user).prefetch_related(
        Prefetch("steps", queryset=PlanStep.objects.order_by("order")),
        Prefetch("interactions", queryset=Interaction.objects.select_related("step", "answered_by").order_by("id")),
    )


def plan_get(user: AbstractBaseUser, plan_id: int) -> Plan:
    return get_owned_or_404(plans_for(user), user, pk=plan_id)


def interactions_visible_to(user: AbstractBaseUser) -> QuerySet[Interaction]:
    """The owner's asks, every ask for an admin, and gated approvals the viewer's scope can answer."""
    qs = Interaction.objects.select_related("plan", "plan__owner", "step")
    scopes = user_scopes(user)
    if "admin" in scopes:
        return qs
    visible = Q(plan__owner=user)
    if not is_service_account(user):
        visible |= Q(required_scope__in=scopes) & ~Q(required_scope="")
    return qs.filter(visible)


def interaction_get(user: AbstractBaseUser, interaction_id: int) -> Interaction:
    try:
        return interactions_visible_to(user).get(pk=interaction_id)
    except Interaction.DoesNotExist:
        raise NotFound("Interaction not found.") from None


def interactions_needing(user: AbstractBaseUser) -> QuerySet[Interaction]:
    """Open asks waiting on this viewer's decision (what the nav badge counts)."""
    qs = (
        Interaction.objects.select_related("plan", "step")
        .filter(status=InteractionStatus.OPEN)
        .exclude(plan__status__in=PLAN_FINISHED)
    )
    mine = Q(plan__owner=user, required_scope="")
    if not is_service_account(user):
        mine |= Q(required_scope__in=user_scopes(user)) & ~Q(plan__owner=user) & ~Q(required_scope="")
    return qs.filter(mine).order_by("id")
