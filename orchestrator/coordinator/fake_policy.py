"""The offline coordinator: inspects plans and asks with read tools, then proposes from that state.

The user's words only pick an intent from a small verb lexicon (stop / apply / again / explain);
which plan or ask to act on, and whether anything is there to act on, comes from the tool
results it inspected — and the deterministic validator decides what is actually allowed.
"""

from __future__ import annotations

import re

from core.agents.engines.fake import FakeReply, FakeState, fake_policy

INTENTS = [
    ("stop", re.compile(r"\b(stop|cancel|abort|halt)\b", re.I)),
    ("pause", re.compile(r"\b(pause|hold)\b", re.I)),
    ("apply", re.compile(r"\b(apply|approve|go ahead|accept)\b", re.I)),
    ("guide", re.compile(r"\b(constraint|also|make sure)\b", re.I)),
    ("reuse", re.compile(r"\b(previous|last) (plan|run)\b.*\b(but|change|with)\b", re.I)),
    ("again", re.compile(r"\b(again|re-?run|retry)\b", re.I)),
]


def _intent(text: str) -> str:
    for name, pattern in INTENTS:
        if pattern.search(text):
            return name
    return "explain"


def _submit(summary: str, actions: list[dict], plan_ids: list[int]) -> FakeReply:
    return FakeReply(
        tool_calls=[
            (
                "submit_action_plan",
                {
                    "summary": summary,
                    "rationale": "from inspected state",
                    "actions": actions,
                    "references": {"plan_ids": plan_ids},
                },
            )
        ]
    )


@fake_policy("coordinator")
def coordinator(state: FakeState) -> FakeReply:
    if not state.called("list_plans"):
        return FakeReply(tool_calls=[("list_plans", {"limit": 10}), ("list_pending_interactions", {})])
    plans = state.result("list_plans") or []
    asks = state.result("list_pending_interactions") or []
    message = state.user_text.split("COORDINATOR_CONTEXT_JSON:", 1)[0]
    intent = _intent(message)
    active = [p for p in plans if p["status"] in ("running", "paused", "approved", "draft")]
    latest = plans[0] if plans else None
    if intent in ("stop", "pause") and active:
        target = active[0]
        kind = "cancel_plan" if intent == "stop" else "pause_plan"
        return _submit(f"Stopping plan {target['id']}.", [{"type": kind, "plan_id": target["id"]}], [target["id"]])
    if intent == "apply":
        own = [a for a in asks if not a["required_scope"]]
        if own:
            return _submit(
                "Approving the pending step.",
                [{"type": "decide_approval", "interaction_id": own[0]["id"], "decision": "approve"}],
                [own[0]["plan_id"]],
            )
        gated = [i for p in active for i in p["open_interactions"] if i["required_scope"]]
        if gated:
            return _submit(
                "This needs another approver.", [{"type": "present_approval", "interaction_id": gated[0]["id"]}], []
            )
    if intent in ("again", "reuse") and latest is not None:
        change = re.split(r"\bbut\b", message, maxsplit=1, flags=re.I)[-1].strip() if intent == "reuse" else ""
        goal = f"{latest['goal']} — {change}" if change else latest["goal"]
        refs = [f"{r['type']}:{r['id']}" for r in latest["context_refs"]]
        action = {"type": "create_plan", "goal": goal, "context_refs": refs, "explicit_request": True}
        return _submit(f"Drafting plan '{goal}'.", [action], [latest["id"]])
    if intent == "guide" and active:
        return _submit(
            "Added your constraint.",
            [{"type": "attach_guidance", "plan_id": active[0]["id"], "text": message.strip()}],
            [active[0]["id"]],
        )
    if latest is None:
        return _submit("There are no plans yet.", [{"type": "answer", "text": "You have no plans yet."}], [])
    if not state.called("get_plan"):
        return FakeReply(tool_calls=[("get_plan", {"plan_id": latest["id"]})])
    plan = state.result("get_plan") or latest
    steps = ", ".join(f"{s['order']}. {s['capability']} ({s['status']})" for s in plan["steps"])
    text = f"Plan {plan['id']} '{plan['goal']}' is {plan['status']}. Steps: {steps}."
    failed = [s for s in plan["steps"] if s["status"] == "failed"]
    if failed:
        text += f" Step {failed[0]['order']} failed: {failed[0]['error']}"
    return _submit(f"Plan {plan['id']} is {plan['status']}.", [{"type": "answer", "text": text}], [plan["id"]])
