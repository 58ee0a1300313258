"""Carry out the validated actions through the same services the API and admin use."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from core.audit import audit_record
from core.errors import DomainError
from orchestrator.choices import PlanStatus
from orchestrator.coordinator.schema import Action
from orchestrator.models import Interaction, Plan
from orchestrator.services.executor import plan_start
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.plans import plan_cancel, plan_create, plan_transition, plan_updated


def plan_attach_guidance(*, plan: Plan, text: str, actor: AbstractBaseUser) -> Plan:
    """Guidance for a running plan: kept in its constraints (what later steps and planners read)."""
    with transaction.atomic():
        locked = Plan.objects.select_for_update().get(pk=plan.pk)
        locked.constraints = {**locked.constraints, "guidance": [*locked.constraints.get("guidance", []), text]}
        locked.save(update_fields=["constraints", "updated_at"])
        audit_record(
            actor=actor, action="plan.guidance", target_type="plan", target_id=locked.pk, details={"text": text}
        )
        plan_updated(locked)
    return locked


def execute_action(action: Action, user: AbstractBaseUser) -> dict[str, Any]:
    try:
        return _execute(action, user)
    except DomainError as exc:  # the state moved between validation and execution
        return {"ok": False, "error": exc.message}


def _execute(action: Action, user: AbstractBaseUser) -> dict[str, Any]:
    kind = action.type
    if kind in ("answer", "ask_clarification"):
        return {"ok": True, "text": action.text}
    if kind == "create_plan":
        plan = plan_create(owner=user, goal=action.goal, context_refs=action.context_refs)
        return {"ok": True, "plan_id": plan.pk, "status": plan.status, "steps": plan.steps.count()}
    if kind in ("present_approval", "decide_approval"):
        ask = Interaction.objects.select_related("plan").get(pk=action.interaction_id)
        if kind == "present_approval":
            return {
                "ok": True,
                "interaction_id": ask.pk,
                "question": ask.question,
                "required_scope": ask.required_scope,
            }
        ask = interaction_answer(interaction=ask, actor=user, decision=action.decision)
        return {"ok": True, "interaction_id": ask.pk, "decision": action.decision}
    plan = Plan.objects.get(pk=action.plan_id)
    if kind == "pause_plan":
        plan = plan_transition(plan=plan, to_status=PlanStatus.PAUSED, actor=user, reason="paused from the coordinator")
    elif kind == "resume_plan":
        plan = plan_start(plan=plan, actor=user)
    elif kind == "cancel_plan":
        plan = plan_cancel(plan=plan, actor=user)
    elif kind == "attach_guidance":
        plan = plan_attach_guidance(plan=plan, text=action.text, actor=user)
    return {"ok": True, "plan_id": plan.pk, "status": plan.status}
