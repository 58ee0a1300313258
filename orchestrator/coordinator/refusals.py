"""What a turn says first when an action it chose was not done: the plain fact, never the model's
summary of what it meant to do.

A model (or the offline stand-in) writes its summary before the validator looks at the state:
"Stopping plan 28." for a plan that completed meanwhile. When a mutation is refused by the state or
policy check, or fails when run, the turn's answer opens with why and what did not happen instead
("Nothing was stopped: plan 28 is already completed.") and the summary is left out. A proposal
waiting for a confirm click is not a refusal (its "To confirm" line says so), nor is a repeat of an
action the same plan already did.
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.coordinator.schema import MUTATING, ActionPlan

REFUSING_CHECKS = ("supported", "state")
UNDONE = {
    "cancel_plan": "stopped",
    "pause_plan": "paused",
    "resume_plan": "resumed",
    "attach_guidance": "changed",
    "stop_step": "stopped",
    "skip_step": "skipped",
    "create_plan": "drafted",
    "derive_plan": "drafted",
    "delegate": "delegated",
    "answer_choice": "answered",
    "request_approval": "requested",
}
DECIDED = {"approve": "approved", "reject": "rejected", "publish": "published"}
CANCEL_WORD = re.compile(r"\bcancel", re.IGNORECASE)


def _undone(action: Any, message: str) -> str:
    if action.type == "decide_approval":
        return DECIDED.get(action.decision, "decided")
    if action.type == "cancel_plan" and CANCEL_WORD.search(message):
        return "cancelled"
    return UNDONE.get(action.type, "changed")


def refusal_sentence(action: Any, reason: str, message: str = "") -> str:
    """ "Nothing was stopped: plan 28 is already completed." — `reason` is the check's or the error's
    (an error's opening capital goes: "Plan moved meanwhile" → "plan moved meanwhile"; a tag stays)."""
    said = " ".join(str(reason).split()).rstrip(". ") or "it was refused"
    if len(said) > 1 and said[0].isupper() and said[1].islower():
        said = said[0].lower() + said[1:]
    return f"Nothing was {_undone(action, message)}: {said}."


def not_done(
    plan: ActionPlan, checks: list[dict[str, Any]], executed: list[dict[str, Any]], message: str
) -> dict[int, str]:
    """{action index: the sentence} for each mutation refused by a check or failed when run, in order."""
    found: dict[int, str] = {}
    for check in checks:
        index = check["action_index"]
        if check["ok"] or index is None or index in found or check["check"] not in REFUSING_CHECKS:
            continue
        action = plan.actions[index]
        if action.type in MUTATING:
            found[index] = refusal_sentence(action, check["reason"], message)
    for item in executed:
        index = item["action_index"]
        action = plan.actions[index]
        if not item["result"].get("ok") and action.type in MUTATING and index not in found:
            found[index] = refusal_sentence(action, item["result"].get("error", ""), message)
    return dict(sorted(found.items()))
