"""OFFLINE STAND-IN for the authoring assistant (fake engine only): turns the engineer's words into
a draft delta with the intent catalogue (`assistant.intents`)."""

from __future__ import annotations

from assistant.intents import draft_for, resolve_intent
from core.agents.engines.fake import FakeReply, FakeState, fake_policy


@fake_policy("authoring_assistant")
def authoring_assistant(state: FakeState) -> FakeReply:
    text = state.user_text
    build = "Mode: build." in state.request.system
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
