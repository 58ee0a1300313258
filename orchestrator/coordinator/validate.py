"""Deterministic checks on a proposed action plan: schema is done by pydantic; here references,
visibility, state, duplicates, policy, backing and claims. Every check is recorded; only actions
whose checks all pass are executed.

- Backing: a mutating action must be asked for in the user's current message — its
  `user_request_quote` is checked against that message (`wording.quote_backing`); tool results,
  attachments and earlier messages never back one. An unbacked action is not done: it is a
  proposal the user may confirm with a click (`confirm.coordinator_proposal_confirm`).
- References: one that fails visibility blocks the whole turn — nothing runs.
- Claims: a first-person claim of action ("I cancelled plan 6", "I've approved it") in the summary
  or an answer needs an allowed action behind it; a description of state ("plan 6 is cancelled",
  "it was approved by april") is not a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from pydantic import ValidationError

from core.capabilities import CapabilityContext, dispatch
from core.errors import DomainError
from orchestrator.choices import PLAN_FINISHED, STEP_SKIPPABLE, STEP_STOPPABLE, InteractionStatus, PlanStatus
from orchestrator.coordinator.execute import delegate_step
from orchestrator.coordinator.schema import MUTATING, SUPPORTED, Action, ActionPlan
from orchestrator.coordinator.targets import target_mismatch
from orchestrator.coordinator.wording import quote_backing
from orchestrator.models import CoordinatorTurn, Interaction, Plan, PlanStep
from orchestrator.planning import normalize_refs
from orchestrator.read_tools import draft_read, draft_review_read
from orchestrator.selectors import interactions_visible_to, plans_for
from orchestrator.services.guidance import guidance_problem
from orchestrator.services.interactions import check_may_answer

VERBS = (
    r"(applied|approved|cancell?ed|stopped|paused|resumed|created|requested|delegated|drafted|rejected|started"
    r"|skipped|published|derived|chose|picked|selected)"
)
# "I cancelled", "I've approved", "we have now created", or a sentence opening on the verb ("Cancelled plan 6.")
CLAIM = re.compile(
    rf"\b(?:i|we)(?:'ve|'d|\s+have|\s+had)?\s+(?:(?:just|now|already|successfully|also|then)\s+)*{VERBS}\b"
    rf"|(?:^|[.!;:\n]\s*){VERBS}\s+(?:the\s+|your\s+|that\s+)?(?:plan|ask|step|checkpoint|interaction|approval|it)\b",
    re.IGNORECASE,
)
CLAIM_BACKING = {
    "applied": {"decide_approval"},
    "approved": {"decide_approval"},
    "rejected": {"decide_approval"},
    "cancelled": {"cancel_plan"},
    "canceled": {"cancel_plan"},
    "stopped": {"cancel_plan", "pause_plan", "stop_step"},
    "skipped": {"skip_step"},
    "published": {"decide_approval"},
    "derived": {"derive_plan"},
    "chose": {"answer_choice"},
    "picked": {"answer_choice"},
    "selected": {"answer_choice"},
    "paused": {"pause_plan"},
    "resumed": {"resume_plan"},
    "started": {"resume_plan"},
    "created": {"create_plan", "delegate", "derive_plan"},
    "drafted": {"create_plan", "delegate", "derive_plan"},
    "requested": {"request_approval"},
    "delegated": {"delegate"},
}
BACKED = "backed_by_message"
# Decisions on work already there: their backing is read strictly (not put off, hedged or passed on).
DECISIONS = frozenset(
    {"decide_approval", "cancel_plan", "pause_plan", "resume_plan", "stop_step", "skip_step", "answer_choice"}
)


@dataclass
class Verdict:
    checks: list[dict[str, Any]] = field(default_factory=list)
    allowed: list[int] = field(default_factory=list)
    proposed: list[int] = field(default_factory=list)  # passed every check but backing: the user may confirm
    blocked: bool = False  # a reference failed visibility: nothing of the turn runs

    def check(self, index: int | None, name: str, ok: bool, reason: str = "") -> bool:
        # the reason explains a failure; a passed check carries none (it read "✓ … not visible")
        self.checks.append({"action_index": index, "check": name, "ok": ok, "reason": "" if ok else reason})
        return ok

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if not c["ok"]]

    @property
    def rejected(self) -> bool:
        """The turn is rejected when it is blocked or an action failed a check other than backing."""
        return self.blocked or any(c["action_index"] is not None and c["check"] != BACKED for c in self.failed)


def _plan(user: AbstractBaseUser, plan_id: int | None) -> Plan | None:
    return plans_for(user).filter(pk=plan_id).first() if plan_id else None


def _interaction(user: AbstractBaseUser, interaction_id: int | None) -> Interaction | None:
    return interactions_visible_to(user).filter(pk=interaction_id).first() if interaction_id else None


def _state(action: Action, user: AbstractBaseUser, superseded: set[int]) -> tuple[bool, str]:
    """Does the current state allow this action? (reason when not)"""
    kind = action.type
    if kind in ("answer", "ask_clarification"):
        return (bool(action.text.strip()), "needs text")
    if kind in ("pause_plan", "resume_plan", "cancel_plan", "attach_guidance"):
        plan = _plan(user, action.plan_id)
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
        if action.derived_from is not None and _plan(user, action.derived_from) is None:
            return False, f"plan {action.derived_from} does not exist or is not visible to you"
        try:
            refs = normalize_refs(action.context_refs)
        except DomainError as exc:
            return False, exc.message
        return _not_duplicate(user, action, refs, superseded)
    return False, f"{kind} is not supported"


def _step_movable(action: Action, user: AbstractBaseUser) -> tuple[bool, str]:
    """Stop a running or waiting step, skip a pending one, of a plan of the user's that is not over."""
    plan = _plan(user, action.plan_id)
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
    plan = _plan(user, action.plan_id)
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


def describe(action: Action) -> str:
    """The action in a few words a person reads on a confirm card."""
    target = (
        f"plan {action.plan_id}" if action.plan_id else f"ask {action.interaction_id}" if action.interaction_id else ""
    )
    what = f"draft {action.draft_id}" if action.draft_id is not None else f"ask {action.interaction_id}"
    removed = ", ".join(map(str, action.remove_steps))
    words = {
        "decide_approval": f"{action.decision or 'decide'} {what}",
        "present_approval": f"show {what}",
        "stop_step": f"stop step {action.step} of plan {action.plan_id}",
        "skip_step": f"skip step {action.step} of plan {action.plan_id}",
        "derive_plan": f"draft a copy of plan {action.plan_id} without step(s) {removed}",
        "answer_choice": f"answer ask {action.interaction_id} with {action.choice!r}",
        "request_approval": f"ask the approvers to decide ask {action.interaction_id}",
        "create_plan": f"draft a plan: {action.goal[:120]}",
        "delegate": f"delegate to {action.profile}: {(action.text or action.goal)[:120]}",
        "attach_guidance": f"add guidance to plan {action.plan_id}: {action.text[:120]}",
    }
    return words.get(action.type, f"{action.type.replace('_plan', '')} {target}".strip())


def _backing(action: Action, message: str, confirmed: bool) -> str:
    if confirmed or action.type not in MUTATING:
        return ""
    words = quote_backing(action.user_request_quote, message, decision=action.type in DECISIONS)
    return words or target_mismatch(action)  # and the words name this plan, step or ask, not another


def _references(plan: ActionPlan, user: AbstractBaseUser, verdict: Verdict) -> None:
    refs = plan.references
    for plan_id in refs.plan_ids:
        verdict.check(None, "reference.plan", _plan(user, plan_id) is not None, f"plan {plan_id} not visible")
    for wo_id in refs.work_order_ids:
        result = dispatch("workorders.get_work_order", {"work_order_id": wo_id}, ctx=CapabilityContext(user=user))
        verdict.check(None, "reference.work_order", not result.is_error, f"work order {wo_id}: {result.message}")
    reviews: set[int] = set()
    for draft_id in refs.draft_ids:
        found = draft_read(user, draft_id)
        reason = "" if found.get("draft") else f"draft {draft_id}: {found.get('error', 'not visible')}"
        verdict.check(None, "reference.draft", not reason, reason)
        if not reason and refs.review_ids:
            reviews |= {r["review_id"] for r in draft_review_read(user, draft_id).get("reviews", [])}
    for review_id in refs.review_ids:  # a review is cited with its draft
        ok = review_id in reviews
        verdict.check(None, "reference.review", ok, f"review {review_id} is not a review of a cited draft of yours")
    for step_id in refs.step_ids:
        ok = PlanStep.objects.filter(pk=step_id, plan__in=plans_for(user)).exists()
        verdict.check(None, "reference.step", ok, f"step {step_id} not visible")
    for event_id in refs.conversation_event_ids:
        ok = CoordinatorTurn.objects.filter(pk=event_id, user=user).exists()
        verdict.check(None, "reference.conversation_event", ok, f"conversation event {event_id} not visible")


def claimed(text: str) -> set[str]:
    """The actions `text` claims in the first person ("I cancelled …"), as lower-case verbs."""
    return {(m.group(1) or m.group(2)).lower() for m in CLAIM.finditer(text.replace("’", "'"))}


def _claims(plan: ActionPlan, verdict: Verdict) -> None:
    """The summary and every answer may claim only what an allowed action does; an answer that
    claims more is withheld (its index leaves `allowed`)."""
    allowed_types = {plan.actions[i].type for i in verdict.allowed}
    texts = [(None, plan.summary)] + [
        (i, plan.actions[i].text) for i in verdict.allowed if plan.actions[i].type in ("answer", "ask_clarification")
    ]
    for index, text in texts:
        for word in sorted(claimed(text)):
            backed = bool(CLAIM_BACKING[word] & allowed_types)
            where = "summary" if index is None else "answer"
            verdict.check(index, "claim", backed, "" if backed else f"{where} claims '{word}' with no action doing it")
            if not backed and index in verdict.allowed:
                verdict.allowed.remove(index)


def validate_action_plan(plan: ActionPlan, user: AbstractBaseUser, *, message: str, confirmed: bool = False) -> Verdict:
    """Check `plan` for `user`, whose current message is `message`; `confirmed` means the user
    clicked to confirm this very plan (so its mutations are backed by that click)."""
    verdict = Verdict()
    seen: set[tuple[Any, ...]] = set()
    superseded: set[int] = set()  # plans an earlier allowed action of this plan stops
    for index, action in enumerate(plan.actions):
        if not verdict.check(index, "supported", action.type in SUPPORTED, f"{action.type} is not supported yet"):
            continue
        key = (
            action.type, action.plan_id, action.interaction_id, action.draft_id, action.step,
            tuple(action.remove_steps), action.decision, action.profile, action.goal, action.text, action.choice,
        )  # fmt: skip
        if action.type not in ("answer", "ask_clarification"):
            if not verdict.check(index, "no_repeat", key not in seen, "the same action twice in one plan"):
                continue
            seen.add(key)
        ok, reason = _state(action, user, superseded)
        if not verdict.check(index, "state", ok, reason):
            continue
        unbacked = _backing(action, message, confirmed)
        if action.type in MUTATING and not verdict.check(
            index, BACKED, not unbacked, f"proposed, not done: {describe(action)} — {unbacked}; confirm it to do it"
        ):
            verdict.proposed.append(index)
            continue
        verdict.allowed.append(index)
        if action.type == "cancel_plan" and action.plan_id:
            superseded.add(action.plan_id)
    _references(plan, user, verdict)
    if any(c["check"].startswith("reference.") for c in verdict.failed):
        verdict.blocked = True
        verdict.allowed, verdict.proposed = [], []
        verdict.check(None, "turn", False, "a reference is not visible to you, so nothing of this turn was done")
    _claims(plan, verdict)
    return verdict
