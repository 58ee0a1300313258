"""Does the current state allow a proposed coordinator action? One check per action type, read for
the user who asked: a plan or ask they cannot see does not exist for them; a plan that is over, a step
that cannot move, an ask already decided or not theirs to decide, a duplicate of work already running
is refused with the reason (recorded in the turn's `validation` as the `state` check, validate.py).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from pydantic import ValidationError

from core.errors import DomainError
from orchestrator.choices import PLAN_FINISHED, STEP_SKIPPABLE, STEP_STOPPABLE, InteractionStatus, PlanStatus
from orchestrator.coordinator.execute import delegate_step
from orchestrator.coordinator.schema import Action
from orchestrator.models import Interaction, Plan
from orchestrator.planning import normalize_refs
from orchestrator.read_tools import draft_review_read
from orchestrator.selectors import interactions_visible_to, plans_for
from orchestrator.services.guidance import guidance_problem
from orchestrator.services.interactions import check_may_answer


def visible_plan(user: AbstractBaseUser, plan_id: int | None) -> Plan | None:
    return plans_for(user).filter(pk=plan_id).first() if plan_id else None


def _interaction(user: AbstractBaseUser, interaction_id: int | None) -> Interaction | None:
    return interactions_visible_to(user).filter(pk=interaction_id).first() if interaction_id else None


def action_state(action: Action, user: AbstractBaseUser, superseded: set[int]) -> tuple[bool, str]:
    """Does the current state allow this action? (reason when not). `superseded`: plans an earlier
    allowed action of the same action plan stops (they no longer count as running)."""
    kind = action.type
    if kind in ("answer", "ask_clarification"):
        return (bool(action.text.strip()), "needs text")
    if kind in ("pause_plan", "resume_plan", "cancel_plan", "attach_guidance"):
        plan = visible_plan(user, action.plan_id)
        if plan is None:
            return False, f"plan {action.plan_id} does not exist or is not visible to you"
        if kind == "pause_plan" and plan.status != PlanStatus.RUNNING:
            return False, f"plan {plan.pk} is {plan.status}; only a running plan can be paused"
        if kind == "resume_plan":
            if plan.status != PlanStatus.PAUSED:
                return False, f"plan {plan.pk} is {plan.status}; only a paused plan can be resumed"
            if plan.interactions.filter(status=InteractionStatus.OPEN).exists():
                return False, f"plan {plan.pk} waits for an answer; answer it instead of resuming"
        if kind in ("cancel_plan", "attach_guidance") and plan.status in PLAN_FINISHED:
            return False, f"plan {plan.pk} is already {plan.status}"
        if kind == "attach_guidance" and not action.text.strip():
            return False, "guidance needs text"
        if kind == "attach_guidance" and action.constraints and (problem := guidance_problem(user, action.constraints)):
            return False, problem
        return True, ""
    if kind in ("stop_step", "skip_step"):
        return _step_movable(action, user)
    if kind == "derive_plan":
        return _derivable(action, user)
    if kind == "answer_choice":
        return _choice_answerable(action, user)
    if action.draft_id is not None and kind in ("present_approval", "decide_approval"):
        return _draft_decidable(action, user)
    if kind in ("present_approval", "decide_approval", "request_approval"):
        ask = _interaction(user, action.interaction_id)
        if ask is None:
            return False, f"interaction {action.interaction_id} does not exist or is not visible to you"
        if ask.status == InteractionStatus.CLOSED or ask.plan.status in PLAN_FINISHED:
            return False, f"interaction {ask.pk} is closed: plan {ask.plan_id} is {ask.plan.status}"
        if ask.status != InteractionStatus.OPEN:
            return False, f"interaction {ask.pk} was already decided ({(ask.answer or {}).get('decision')})"
        if kind == "request_approval":
            return _requestable(ask, user)
        if kind == "decide_approval":
            if ask.required_scope:
                return False, "policy: a gated approval stays human (the approval console or the Plans page)"
            if not ask.coordinator_approvable:
                return False, (
                    f"policy: interaction {ask.pk} is not a coordinator-approvable checkpoint "
                    "(the executor marks only bounded read/safe permissions and quality-gate confirms); answer it yourself"
                )
            if action.decision not in ("approve", "reject"):
                return False, "decision must be approve or reject"
            try:
                check_may_answer(ask, user)
            except DomainError as exc:
                return False, exc.message
        return True, ""
    if kind == "delegate":
        return _delegable(action, user, superseded)
    if kind == "create_plan":
        if not action.goal.strip():
            return False, "a plan needs a goal"
        if action.derived_from is not None and visible_plan(user, action.derived_from) is None:
            return False, f"plan {action.derived_from} does not exist or is not visible to you"
        try:
            refs = normalize_refs(action.context_refs)
        except DomainError as exc:
            return False, exc.message
        return _not_duplicate(user, action, refs, superseded)
    return False, f"{kind} is not supported"


def _step_movable(action: Action, user: AbstractBaseUser) -> tuple[bool, str]:
    """Stop a running or waiting step, skip a pending one, of a plan of the user's that is not over."""
    plan = visible_plan(user, action.plan_id)
    if plan is None:
        return False, f"plan {action.plan_id} does not exist or is not visible to you"
    step = next((s for s in plan.steps.all() if s.order == action.step), None)
    if step is None:
        return False, f"plan {plan.pk} has no step {action.step}"
    if plan.status in PLAN_FINISHED:
        return False, f"plan {plan.pk} is already {plan.status}; its steps are final"
    stop = action.type == "stop_step"
    if step.status not in (STEP_STOPPABLE if stop else STEP_SKIPPABLE):
        hint = "; skip it instead" if stop and step.status == "pending" else ""
        return (
            False,
            f"step {step.order} of plan {plan.pk} is {step.status}: it cannot be {'stopp' if stop else 'skipp'}ed{hint}",
        )
    if stop and plan.status not in (PlanStatus.RUNNING, PlanStatus.PAUSED):
        return False, f"plan {plan.pk} is {plan.status}; nothing of it runs to stop"
    return True, ""


def _choice_answerable(action: Action, user: AbstractBaseUser) -> tuple[bool, str]:
    """An open choice on a draft the user may answer (as on the Plans page), with one of its options."""
    ask = _interaction(user, action.interaction_id)
    if ask is None:
        return False, f"interaction {action.interaction_id} does not exist or is not visible to you"
    if ask.kind != "choice" or ask.status != InteractionStatus.OPEN:
        return False, f"interaction {ask.pk} is not an open choice ({ask.kind}, {ask.status})"
    try:
        check_may_answer(ask, user)
    except DomainError as exc:
        return False, f"policy: {exc.message}"
    if ask.plan.status != PlanStatus.DRAFT:
        return False, f"plan {ask.plan_id} is {ask.plan.status}; a choice only shapes a draft"
    if action.choice not in ask.options:
        listed = ", ".join(f"{n}. {o}" for n, o in enumerate(ask.options, start=1))
        return False, f"'{action.choice}' is not one of the options of ask {ask.pk} ({listed})"
    return True, ""


def _derivable(action: Action, user: AbstractBaseUser) -> tuple[bool, str]:
    """A changed copy of a plan of the user's: at least one of its steps left out, not all of them."""
    plan = visible_plan(user, action.plan_id)
    if plan is None:
        return False, f"plan {action.plan_id} does not exist or is not visible to you"
    orders = {s.order for s in plan.steps.all()}
    unknown = sorted(set(action.remove_steps) - orders)
    if not action.remove_steps or unknown:
        return (
            False,
            f"plan {plan.pk} has no step {', '.join(map(str, unknown))}" if unknown else "name a step to leave out",
        )
    if orders <= set(action.remove_steps):
        return False, "leaving out every step leaves no plan"
    return True, ""


def _draft_decidable(action: Action, user: AbstractBaseUser) -> tuple[bool, str]:
    """A draft's review: visible to the user (owner, or approver); a decision only one of `your_moves`,
    which the assistant computes with its own scope and separation-of-duties checks."""
    draft = draft_review_read(user, action.draft_id)
    if "error" in draft:
        return False, f"draft {action.draft_id} does not exist or is not visible to you ({draft['error']})"
    if action.type == "present_approval":
        return True, ""
    if action.decision not in draft["your_moves"]:
        may = f"you may {' or '.join(draft['your_moves'])}" if draft["your_moves"] else "you may not decide it"
        return False, (
            f"policy: draft {draft['draft_id']} is {draft['status']} and waits for {draft['waiting_for'] or 'nobody'}; "
            f"{may} (approving needs the approver scope and someone other than the author; publishing, "
            "someone other than the author and the approver)"
        )
    if action.decision == "reject" and not action.text.strip():
        return False, "a rejection needs a reason (text)"
    return True, ""


def _requestable(ask: Interaction, user: AbstractBaseUser) -> tuple[bool, str]:
    """Request approval only of an ask someone else must decide, and only once."""
    if not ask.required_scope:
        return False, f"interaction {ask.pk} is yours to answer; present or decide it instead of requesting it"
    try:  # an approver who may decide it requests it of no one (nor marks it requested by them)
        check_may_answer(ask, user)
        return False, f"interaction {ask.pk} is yours to decide on the Plans page; request it of no one"
    except DomainError:
        pass
    requested_by = ask.evidence.get("approval_requested_by")
    if requested_by:
        return False, f"approval of interaction {ask.pk} was already requested by {requested_by}"
    return True, ""


def _delegable(action: Action, user: AbstractBaseUser, superseded: set[int]) -> tuple[bool, str]:
    try:
        refs = normalize_refs(action.context_refs)
        delegate_step(action, refs)
    except (DomainError, ValidationError, KeyError) as exc:
        return False, f"cannot delegate to {action.profile!r}: {getattr(exc, 'message', exc)}"
    return _not_duplicate(user, action, refs, superseded)


def _not_duplicate(
    user: AbstractBaseUser, action: Action, refs: list[dict[str, Any]], superseded: set[int]
) -> tuple[bool, str]:
    """No second plan for work already running: guide the running one instead. Plans this same
    action plan stops first (`superseded`) no longer count as running."""
    wanted = {(r["type"], r["id"]) for r in refs}
    goal = " ".join((action.goal or action.text).lower().split())
    open_plans = plans_for(user).exclude(status__in=PLAN_FINISHED).exclude(pk__in=superseded)
    for plan in open_plans:
        theirs = {(r["type"], r["id"]) for r in plan.context_refs}
        if (wanted and wanted & theirs) or " ".join(plan.goal.lower().split()) == goal:
            return (
                False,
                f"duplicate: plan {plan.pk} ({plan.status}) already covers this; attach guidance to it instead",
            )
    return True, ""
