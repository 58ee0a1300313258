"""Does a mutation act on what the user's quoted words name? "cancel plan 8" backs cancelling plan 8, not
plan 7; "approve step 3" backs deciding the ask on step 3, not the one on step 1; "approve ask 5" ask 5.

The quote (`user_request_quote`) is already checked to be the user's own instruction
(`wording.quote_backing`); this checks its numbers against the action's target, in code, so a model
misled by a tool result, a plan goal or an ask's question cannot move a different plan, step or ask
on the strength of the user's words. Words that name no number ("stop that one") name no target.
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.models import Interaction

NAMED = {
    "plan": re.compile(r"\bplan\s*#?\s*(\d+)\b", re.I),
    "step": re.compile(r"\bstep\s*#?\s*(\d+)\b", re.I),
    "ask": re.compile(r"\b(?:ask|interaction|checkpoint)\s*#?\s*(\d+)\b", re.I),
    "draft": re.compile(r"\bdraft\s*#?\s*(\d+)\b", re.I),
}
PLAN_MOVES = frozenset(
    {"pause_plan", "resume_plan", "cancel_plan", "attach_guidance", "derive_plan", "stop_step", "skip_step"}
)
ASK_MOVES = frozenset({"decide_approval", "request_approval", "answer_choice"})


def _named(quote: str) -> dict[str, set[int]]:
    return {kind: {int(n) for n in pattern.findall(quote)} for kind, pattern in NAMED.items()}


def _differs(kind: str, named: set[int], actual: Any) -> str:
    if named and actual not in named:
        said = ", ".join(f"{kind} {n}" for n in sorted(named))
        return f"your words name {said}, but this acts on {kind} {actual}"
    return ""


def target_mismatch(action: Any) -> str:
    """Why the action's target is not what its quote names, or "" (nothing named, or the same)."""
    named = _named(action.user_request_quote or "")
    if action.type in PLAN_MOVES:
        step = action.step if action.type in ("stop_step", "skip_step") else None
        return _differs("plan", named["plan"], action.plan_id) or (
            _differs("step", named["step"], step) if step is not None else ""
        )
    if action.type == "decide_approval" and action.draft_id is not None:
        return _differs("draft", named["draft"], action.draft_id)
    if action.type in ASK_MOVES and action.interaction_id is not None:
        ask = Interaction.objects.select_related("step").filter(pk=action.interaction_id).first()
        if ask is None:
            return ""  # the state check has already refused an ask that is not there
        return (
            _differs("ask", named["ask"], ask.pk)
            or _differs("plan", named["plan"], ask.plan_id)
            or _differs("step", named["step"], ask.step.order if ask.step_id else None)
        )
    return ""
