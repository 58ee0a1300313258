"""OFFLINE STAND-IN for the authoring assistant (fake engine only): turns the engineer's words into
a draft delta with the intent catalogue (`assistant.intents`)."""

from __future__ import annotations

from assistant.agents.author import ASK_GUIDANCE
from assistant.intents import draft_for, resolve_intent
from assistant.offline.changes import priority_change
from core.agents.engines.fake import FakeReply, FakeState, fake_policy


@fake_policy("authoring_assistant")
def authoring_assistant(state: FakeState) -> FakeReply:
    text = state.user_text
    build = "Mode: build." in state.request.system
    proposed = _proposed_change(state)
    if proposed is not None:
        return proposed
    attachments = state.request.system.count("<attachment ")
    resolved = resolve_intent(text)
    note = f" I read {attachments} attachment(s)." if attachments else ""
    if build and resolved["intent"]:
        delta = draft_for(resolved["intent"], resolved["slots"], text)
        reply = f"Drafted the {delta['type']} {delta['name']}.{note} Validate and test it when ready."
        turn = {"reply": reply, "questions": [], "draft_deltas": [{"op": "create", **delta}]}
    elif build:
        question = "Is it a tool, a skill, a prompt, a workflow or an MCP server?"
        turn = {"reply": f"What should I build?{note}", "questions": [question], "draft_deltas": []}
    else:
        turn = {"reply": f"(chat) {text[:200]}{note} Switch to build mode to create drafts.", "draft_deltas": []}
    return FakeReply(tool_calls=[("submit_turn", turn)])


def _proposed_change(state: FakeState) -> FakeReply | None:
    """A priority change the engineer asked for, proposed only where it waits for their Confirm."""
    change = priority_change(state.user_text)
    if change is None or ASK_GUIDANCE not in state.request.system or "update_work_order" not in state.tool_names:
        return None
    if not state.called("update_work_order"):
        return FakeReply(tool_calls=[("update_work_order", change)])
    outcome = next(o for o in reversed(state.outcomes) if o.name == "update_work_order")
    if outcome.is_error:
        reply = f"I could not propose that change: {outcome.content}"
    else:
        reply = (
            f"Proposed: work order {change['work_order_id']} priority → {change['priority']}. "
            "It runs only when you press Confirm."
        )
    return FakeReply(tool_calls=[("submit_turn", {"reply": reply, "questions": [], "draft_deltas": []})])
