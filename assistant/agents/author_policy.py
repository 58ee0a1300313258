"""Offline policy of the authoring assistant: turns the engineer's words into a draft delta."""

from __future__ import annotations

import re

from core.agents.engines.fake import FakeReply, FakeState, fake_policy

TYPES = (("mcp", "mcp_server"), ("workflow", "workflow"), ("prompt", "prompt"), ("skill", "skill"), ("tool", "tool"))


def _slug(text: str, fallback: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:4]
    return "_".join(words) or fallback


def _delta(kind: str, text: str) -> dict:
    quoted = re.search(r"[\"“](.+?)[\"”]", text, re.S)
    named = re.search(r"\b(?:called|named)\s+([A-Za-z0-9_\-]+)", text)
    target = re.search(r"\bfor (?:the )?([a-z_]+)(?: agent)?\b", text, re.I)
    if kind == "prompt":
        agent = (target.group(1) if target else "investigator").lower()
        body = quoted.group(1) if quoted else f"You are the {agent}. Focus on {{{{focus}}}} first."
        variables = sorted(set(re.findall(r"\{\{\s*(\w+)\s*\}\}", body)))
        return {
            "type": "prompt",
            "name": named.group(1) if named else f"{agent}_prompt",
            "spec": {"agent": agent, "text": body, "variables": variables},
        }
    if kind == "skill":
        name = named.group(1) if named else _slug(text, "skill")
        return {
            "type": "skill",
            "name": name,
            "spec": {"instructions": quoted.group(1) if quoted else text, "triggers": [name.split("_")[0]]},
        }
    if kind == "tool":
        name = (named.group(1) if named else "convert_units").replace("-", "_").lower()
        source = "def run(params):\n    return {'value': params['value'] * params.get('factor', 1)}\n"
        return {
            "type": "tool",
            "name": name,
            "spec": {
                "description": text[:200],
                "entrypoint": "run",
                "source": source,
                "input_schema": {
                    "type": "object",
                    "properties": {"value": {"type": "number"}, "factor": {"type": "number"}},
                    "required": ["value"],
                },
                "tests": [{"input": {"value": 2, "factor": 3}, "expect": {"value": 6}}],
            },
        }
    if kind == "workflow":
        return {
            "type": "workflow",
            "name": named.group(1) if named else _slug(text, "workflow"),
            "spec": {"description": text[:200], "steps": []},
        }
    return {
        "type": "mcp_server",
        "name": named.group(1) if named else "mcp_server",
        "spec": {"transport": "http", "url": "http://localhost:9000/mcp"},
    }


@fake_policy("authoring_assistant")
def authoring_assistant(state: FakeState) -> FakeReply:
    text = state.user_text
    build = "Mode: build." in state.request.system
    attachments = state.request.system.count("<attachment ")
    kind = next((k for word, k in TYPES if re.search(rf"\b{word}", text, re.I)), None)
    note = f" I read {attachments} attachment(s)." if attachments else ""
    if build and kind:
        delta = _delta(kind, text)
        reply = f"Drafted the {delta['type']} {delta['name']}.{note} Validate and test it when ready."
        return FakeReply(
            tool_calls=[("submit_turn", {"reply": reply, "questions": [], "draft_deltas": [{"op": "create", **delta}]})]
        )
    if build:
        turn = {
            "reply": f"What should I build?{note}",
            "questions": ["Is it a tool, a skill, a prompt or a workflow?"],
            "draft_deltas": [],
        }
        return FakeReply(tool_calls=[("submit_turn", turn)])
    reply = f"(chat) {text[:200]}{note} Switch to build mode to create drafts."
    return FakeReply(tool_calls=[("submit_turn", {"reply": reply, "questions": [], "draft_deltas": []})])
