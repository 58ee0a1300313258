"""Deterministic checks on a proposed action plan: schema is done by pydantic; here references,
visibility, state, duplicates, policy, backing and claims. Every check is recorded; only actions
whose checks all pass are executed. The state checks per action type are in action_state.py, what
counts as a claim in claims.py.

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

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.capabilities import CapabilityContext, dispatch
from orchestrator.coordinator.action_state import action_state, visible_plan
from orchestrator.coordinator.claims import CLAIM_BACKING, claimed
from orchestrator.coordinator.schema import MUTATING, SUPPORTED, Action, ActionPlan
from orchestrator.coordinator.targets import target_mismatch
from orchestrator.coordinator.wording import quote_backing
from orchestrator.models import CoordinatorTurn, PlanStep
from orchestrator.read_tools import draft_read, draft_review_read
from orchestrator.selectors import plans_for

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
        verdict.check(None, "reference.plan", visible_plan(user, plan_id) is not None, f"plan {plan_id} not visible")
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
        ok, reason = action_state(action, user, superseded)
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
