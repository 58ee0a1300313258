"""Intent resolution for the workbench: deterministic parsing of what the engineer wants to
create, and the draft it becomes. The authoring assistant's offline stand-in
(assistant/offline/author.py) uses it too."""

from __future__ import annotations

import re
from typing import Any

from assistant.validators import AGENT_FINISH_TOOLS

INTENTS = {
    "create_tool": "tool",
    "create_skill": "skill",
    "create_workflow": "workflow",
    "create_mcp_server": "mcp_server",
    "write_prompt": "prompt",
}
_KEYWORDS = (("mcp", "create_mcp_server"), ("workflow", "create_workflow"), ("prompt", "write_prompt"),
             ("skill", "create_skill"), ("tool", "create_tool"))  # fmt: skip


def intent_of(op: str, draft_type: str) -> str:
    """The intent name a draft delta counts as (what `disabled_intents` lists)."""
    return "write_prompt" if draft_type == "prompt" else f"{op}_{draft_type}"


def _slug(text: str, fallback: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", text.lower())[:4]) or fallback


def resolve_intent(text: str) -> dict[str, Any]:
    """{intent, confidence, slots}; intent "" when nothing matches."""
    intent = next((i for word, i in _KEYWORDS if re.search(rf"\b{word}", text, re.I)), "")
    quoted = re.search(r"[\"“](.+?)[\"”]", text, re.S)
    named = re.search(r"\b(?:called|named)\s+([A-Za-z0-9_\-]+)", text)
    target = re.search(r"\bfor (?:the )?([a-z_]+)(?: agent)?\b", text, re.I)
    slots: dict[str, Any] = {}
    if named:
        slots["name"] = named.group(1)
    if quoted:
        slots["text"] = quoted.group(1)
    if target:
        slots["agent"] = target.group(1).lower()
    confidence = 0.0 if not intent else (0.9 if named or quoted else 0.6)
    return {"intent": intent, "confidence": confidence, "slots": slots}


def draft_for(intent: str, slots: dict[str, Any], text: str = "") -> dict[str, Any]:
    """The draft (type, name, spec) an intent creates, from its slots."""
    kind = INTENTS[intent]
    if kind == "prompt":
        agent = str(slots.get("agent") or "investigator")
        # quoted text verbatim, else the instruction after the first colon, else a stub to edit
        instruction = text.split(":", 1)[1].strip() if ":" in text else ""
        body = str(slots.get("text") or "")
        if not body and instruction:
            body = f"You are the {agent}. {instruction[:1].upper()}{instruction[1:]}"
        body = body or f"You are the {agent}. Focus on {{{{focus}}}} first."
        finish = AGENT_FINISH_TOOLS.get(agent)
        if finish and finish not in body:  # validation refuses a prompt that drops the finish instruction
            body = f"{body.rstrip()} Finish by calling {finish}."
        variables = sorted(set(re.findall(r"\{\{\s*(\w+)\s*\}\}", body)))
        spec = {"agent": agent, "text": body, "variables": variables}
        return {"type": kind, "name": str(slots.get("name") or f"{agent}_prompt"), "spec": spec}
    if kind == "skill":
        name = str(slots.get("name") or _slug(text, "skill"))
        spec = {"instructions": str(slots.get("text") or text), "triggers": [name.split("_")[0]]}
        return {"type": kind, "name": name, "spec": spec}
    if kind == "tool":
        name = str(slots.get("name") or "convert_units").replace("-", "_").lower()
        spec = {
            "description": text[:200],
            "entrypoint": "run",
            "source": "def run(params):\n    return {'value': params['value'] * params.get('factor', 1)}\n",
            "input_schema": {
                "type": "object",
                "properties": {"value": {"type": "number"}, "factor": {"type": "number"}},
                "required": ["value"],
            },
            "tests": [{"input": {"value": 2, "factor": 3}, "expect": {"value": 6}}],
        }
        return {"type": kind, "name": name, "spec": spec}
    if kind == "workflow":
        name = str(slots.get("name") or _slug(text, "workflow"))
        return {"type": kind, "name": name, "spec": {"description": text[:200], "steps": slots.get("steps", [])}}
    spec = {"transport": "http", "url": str(slots.get("url") or "http://localhost:9000/mcp")}
    return {"type": kind, "name": str(slots.get("name") or "mcp_server"), "spec": spec}
