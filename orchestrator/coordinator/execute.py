"""Carry out the validated actions through the same services the API and admin use."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from core.audit import audit_record
from core.capabilities import registry
from core.errors import DomainError
from core.humantime import human_time
from orchestrator.choices import PlanStatus
from orchestrator.coordinator.profiles import PROFILES, runner_for
from orchestrator.coordinator.schema import Action
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning import normalize_refs
from orchestrator.planning.validation import ref_values, validate_inputs
from orchestrator.read_tools import draft_decide, draft_review_read
from orchestrator.services.executor import plan_start
from orchestrator.services.interactions import check_may_answer, interaction_answer, interaction_request_approval
from orchestrator.services.plans import (
    plan_cancel,
    plan_create,
    plan_derive,
    plan_transition,
    plan_updated,
)
from orchestrator.services.step_moves import step_skip, step_stop, stopped_roots


def plan_attach_guidance(
    *, plan: Plan, text: str, actor: AbstractBaseUser, constraints: dict[str, Any] | None = None
) -> Plan:
    """Guidance for a plan not yet over: the words are kept in `constraints.guidance`, and cell/line
    limits (`constraints`: cells, lines) replace the plan's, so the steps still to run outside them are
    skipped (services/guidance.py); a running plan gets a new executor pass that reads them."""
    limits = {k: v for k, v in (constraints or {}).items() if v}
    with transaction.atomic():
        locked = Plan.objects.select_for_update().get(pk=plan.pk)
        guidance = [*locked.constraints.get("guidance", []), text]
        locked.constraints = {**locked.constraints, **limits, "guidance": guidance}
        locked.save(update_fields=["constraints", "updated_at"])
        audit_record(
            actor=actor, action="plan.guidance", target_type="plan", target_id=locked.pk,
            details={"text": text, "constraints": limits},
        )  # fmt: skip
        plan_updated(locked)
        if limits and locked.status == PlanStatus.RUNNING:
            enqueue_execution(locked.pk)
    return locked


def delegate_step(action: Action, refs: list[dict[str, Any]]) -> dict[str, Any]:
    """The one step a delegated profile runs, inputs filled from refs and the text (schema-checked)."""
    profile = PROFILES.get(action.profile)
    if profile is None:
        raise KeyError(f"unknown profile {action.profile!r}; delegable: {', '.join(PROFILES)}")
    values = ref_values(refs)
    task = action.text or action.goal
    if not profile.capability:  # an agent profile: the read-only or the writing runner, by its allowlist
        runner = runner_for(profile)
        return {
            "capability": runner,
            "inputs": validate_inputs(runner, {"profile": profile.name, "task": task, "context": values}),
        }
    cap = registry.get(profile.capability)
    if cap is None:
        raise KeyError(f"{profile.capability} is not registered")
    inputs = {field: values[field] for field in cap.input.model_fields if field in values}
    if "question" in cap.input.model_fields:
        inputs["question"] = task
    return {"capability": cap.name, "inputs": validate_inputs(cap.name, inputs)}


def execute_delegations(
    actions: list[Action], indexes: list[int], user: AbstractBaseUser, *, engine: str = ""
) -> dict[str, Any]:
    """All delegations of one action plan become ONE draft plan, their dependencies kept; `engine`
    (the one that proposed them) is recorded on the plan as its steps' author."""
    position = {index: pos for pos, index in enumerate(indexes)}
    steps, refs, goals = [], [], []
    for index in indexes:
        action = actions[index]
        action_refs = normalize_refs(action.context_refs)
        step = delegate_step(action, action_refs)
        step["depends_on"] = [position[d] for d in action.depends_on if d in position]
        steps.append(step)
        refs += [r for r in action.context_refs if r not in refs]
        goals.append(f"{action.profile}: {action.goal or action.text}")
    try:
        plan = plan_create(owner=user, goal="; ".join(goals), context_refs=refs, steps=steps, engine=engine)
    except DomainError as exc:
        return {"ok": False, "error": exc.message}
    return {"ok": True, "plan_id": plan.pk, "status": plan.status, "steps": len(steps)}


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
        source = Plan.objects.get(pk=action.derived_from) if action.derived_from is not None else None
        plan = plan_create(owner=user, goal=action.goal, context_refs=action.context_refs, derived_from=source)
        return {"ok": True, "plan_id": plan.pk, "status": plan.status, "steps": plan.steps.count()}
    if kind == "derive_plan":
        source = Plan.objects.get(pk=action.plan_id)
        plan = plan_derive(source=source, owner=user, remove_steps=action.remove_steps, goal=action.goal)
        return {
            "ok": True, "plan_id": plan.pk, "status": plan.status, "steps": plan.steps.count(),
            "derived_from": source.pk, "removed": plan.derivation["removed"],
        }  # fmt: skip
    if kind in ("stop_step", "skip_step"):
        step = PlanStep.objects.get(plan_id=action.plan_id, order=action.step)
        move = step_stop if kind == "stop_step" else step_skip
        step = move(step=step, actor=user, reason=action.text)
        roots = stopped_roots(PlanStep.objects.filter(plan_id=action.plan_id))
        blocked = sorted(o for o, root in roots.items() if root.pk == step.pk and o != step.order)
        return {
            "ok": True,
            "plan_id": action.plan_id,
            "step": step.order,
            "step_status": step.status,
            "blocked": blocked,
        }
    if action.draft_id is not None and kind == "present_approval":
        draft = draft_review_read(user, action.draft_id)
        return {"ok": "error" not in draft, **draft}
    if action.draft_id is not None and kind == "decide_approval":
        return draft_decide(user, action.draft_id, action.decision, action.text)
    if kind in ("present_approval", "decide_approval"):
        ask = Interaction.objects.select_related("plan").get(pk=action.interaction_id)
        if kind == "present_approval":
            return {
                "ok": True,
                "interaction_id": ask.pk,
                "plan_id": ask.plan_id,
                "kind": ask.kind,
                "question": ask.question,
                "options": ask.options if ask.kind == "choice" else [],
                "required_scope": ask.required_scope,
                "yours_to_decide": bool(ask.required_scope) and _may_answer(ask, user),
            }
        ask = interaction_answer(interaction=ask, actor=user, decision=action.decision)
        return {"ok": True, "interaction_id": ask.pk, "plan_id": ask.plan_id, "decision": action.decision}
    if kind == "answer_choice":  # the Plans page's answer path: one of the options, then the draft re-planned
        ask = Interaction.objects.select_related("plan").get(pk=action.interaction_id)
        ask = interaction_answer(interaction=ask, actor=user, choice=action.choice)
        plan = Plan.objects.get(pk=ask.plan_id)
        still = list(plan.interactions.filter(kind="choice", status="open").values_list("question", flat=True))
        return {
            "ok": True, "interaction_id": ask.pk, "plan_id": plan.pk, "choice": action.choice,
            "status": plan.status, "steps": plan.steps.count(), "open_choices": still,
        }  # fmt: skip
    if kind == "request_approval":
        ask = interaction_request_approval(
            interaction=Interaction.objects.select_related("plan").get(pk=action.interaction_id),
            actor=user,
            note=action.text,
        )
        return {"ok": True, "interaction_id": ask.pk, "plan_id": ask.plan_id, "required_scope": ask.required_scope}
    plan = Plan.objects.get(pk=action.plan_id)
    if kind == "pause_plan":
        plan = plan_transition(plan=plan, to_status=PlanStatus.PAUSED, actor=user, reason="paused from the coordinator")
    elif kind == "resume_plan":
        plan = plan_start(plan=plan, actor=user)
    elif kind == "cancel_plan":
        plan = plan_cancel(plan=plan, actor=user)
    elif kind == "attach_guidance":
        plan = plan_attach_guidance(plan=plan, text=action.text, actor=user, constraints=action.constraints)
    return {"ok": True, "plan_id": plan.pk, "status": plan.status}


def _may_answer(ask: Interaction, user: AbstractBaseUser) -> bool:
    try:
        check_may_answer(ask, user)
    except DomainError:
        return False
    return True


def outcome_text(action: Action, result: dict[str, Any]) -> str:
    """One sentence a person reads about an executed action."""
    kind, plan_id = action.type, result.get("plan_id")
    if not result.get("ok"):
        return f"Failed: {kind}: {result.get('error')}."
    if kind in ("create_plan", "delegate"):
        return f"Drafted plan {plan_id} with {result['steps']} step(s); it waits for your approval on the Plans page."
    if kind == "attach_guidance":
        limits = "; ".join(f"{k}: {', '.join(v)}" for k, v in action.constraints.items() if v)
        applied = f" Steps still to run outside {limits} are skipped." if limits else ""
        return f"Guidance added to plan {plan_id} ({result['status']}).{applied}"
    if kind == "derive_plan":
        removed = ", ".join(f"step {r['order']} ({r['capability']})" for r in result["removed"])
        return (
            f"Drafted plan {plan_id} from plan {result['derived_from']} without {removed}: {result['steps']} step(s); "
            "it waits for your approval on the Plans page."
        )
    if kind in ("stop_step", "skip_step"):
        blocked = result.get("blocked") or []
        said = f"Step {result['step']} of plan {plan_id} is now {result['step_status']}"
        if kind == "skip_step":
            return f"{said}; the plan goes on without it."
        if not blocked:
            return f"{said}; nothing depends on it, the plan goes on with its other steps."
        steps = ("step " if len(blocked) == 1 else "steps ") + ", ".join(map(str, blocked))
        return f"{said}; {steps} depended on it and will not run (skipped, with the reason); the rest goes on."
    if "draft_id" in result:
        return draft_outcome(action, result)
    if kind in ("pause_plan", "resume_plan", "cancel_plan"):
        return f"Plan {plan_id} is now {result['status']}."
    if kind == "decide_approval":
        return f"Ask {result['interaction_id']} on plan {plan_id}: {result['decision']}d."
    if kind == "answer_choice":
        then = f" It asks next: {result['open_choices'][0]}" if result["open_choices"] else ""
        return (
            f"Ask {result['interaction_id']} answered with {result['choice']}: plan {plan_id} was planned again "
            f"({result['steps']} step(s), {result['status']}); it waits for your approval on the Plans page.{then}"
        )
    if kind == "present_approval" and result.get("kind") == "choice":
        options = "; ".join(f"{n}. {o}" for n, o in enumerate(result["options"], start=1))
        example = result["options"][min(1, len(result["options"]) - 1)] if result["options"] else ""
        return (
            f"Plan {plan_id} waits for your choice (ask {result['interaction_id']}): {result['question']} "
            f"Options: {options}. Say which, e.g. 'the {'second' if len(result['options']) > 1 else 'first'} one' "
            f"or '{example}'."
        )
    if kind == "present_approval":
        who = (
            "it is yours to decide: Approve or Reject it on the Plans page (Waiting for your decision); "
            "the coordinator does not decide gated approvals"
            if result.get("yours_to_decide")
            else f"only someone else with the {result['required_scope']} scope can decide it"
            if result["required_scope"]
            else "answer it on the Plans page"
        )
        return f"Waiting on ask {result['interaction_id']} of plan {plan_id}: {result['question']} ({who})."
    if kind == "request_approval":
        return f"Asked the {result['required_scope']}s to decide ask {result['interaction_id']} on plan {plan_id}."
    return f"Done: {kind}."


def draft_outcome(action: Action, result: dict[str, Any]) -> str:
    """A draft's review in a sentence: published at T by X, or who it waits for and where to act. T as
    a person reads it (core.humantime: the read tool's ISO is for the model)."""
    name = (
        f"Draft {result['draft_id']} ({result['type']} '{result['name']}', v{result['version']} by {result['owner']})"
    )
    if result["status"] == "published":
        return f"{name} was published at {human_time(result['published_at'])} by {result['published_by']}."
    said = f"{name} is {result['status']}"
    if result.get("status_reason"):
        said += f" ({result['status_reason']})"
    if action.type == "decide_approval":
        done = {"approve": "approved", "reject": "rejected", "publish": "published"}[action.decision]
        return f"{said}: you {done} it." if result["status"] != "publish_failed" else f"{said}: publishing failed."
    said += f"; it waits for {result['waiting_for']}" if result["waiting_for"] else ""
    moves = result.get("your_moves") or []
    act = f" You may {' or '.join(moves)} it: say e.g. '{moves[0]} draft {result['draft_id']}'." if moves else ""
    return f"{said}. Review it at {result['link']}.{act}"
