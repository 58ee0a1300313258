"""OFFLINE STAND-IN for the KB agents (fake engine only): the KB builder (the Investigator's
agent-as-tool) and KB Q&A answer from the equipment KB JSON by matching the question's failure mode
or section name."""

from __future__ import annotations

import json
from typing import Any

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from workorders.agents.context import parse_context
from workorders.shapes import kb_failure_modes, kb_list_of_str, kb_objects, kb_parts, kb_section, kb_text


def answer_from_kb(kb: dict, question: str, tag: str) -> dict[str, Any]:
    q = question.lower()
    kb = kb if isinstance(kb, dict) else {}  # tolerant reads: a KB stored before its shape was checked
    for mode, info in kb_failure_modes(kb).items():
        if mode in q or mode.replace("_", " ") in q:
            procedure = kb_section(kb_section(kb, "procedures"), kb_text(info, "procedure"))
            parts = ", ".join(f"{p['qty']}× {p['ref']}" for p in kb_parts(info.get("parts")))
            answer = (
                f"{mode} on {tag}: signatures {'; '.join(kb_list_of_str(info, 'signatures'))}. "
                f"Remedy: {kb_text(info, 'remedy') or 'n/a'}. Procedure {kb_text(info, 'procedure') or 'n/a'}"
                f" ({kb_text(procedure, 'title')}). Parts: {parts or 'none listed'}."
            )
            return {"answer": answer, "source": f"kb:failure_modes.{mode}", "confidence": 0.85}
    if "part" in q or "spare" in q:
        parts = "; ".join(
            f"{p['ref']} {p.get('name', '')} (on hand {p.get('on_hand', '?')})"
            for p in kb_objects(kb.get("spare_parts"))
            if "ref" in p
        )
        if parts:
            return {"answer": f"Spare parts of {tag}: {parts}.", "source": "kb:spare_parts", "confidence": 0.8}
    for key, value in kb.items():
        if key.replace("_", " ") in q or key in q:
            return {"answer": f"{key} of {tag}: {json.dumps(value)[:1500]}", "source": f"kb:{key}", "confidence": 0.6}
    return {"answer": f"The KB of {tag} does not cover that.", "source": "none", "confidence": 0.1}


def _progress(cell_id: int, stage: str, message: str, done: int) -> tuple[str, dict[str, Any]]:
    return ("render_kb_progress", {"cell_id": cell_id, "stage": stage, "message": message, "done": done, "total": 2})


@fake_policy("kb_builder")
def kb_builder(state: FakeState) -> FakeReply:
    """Shows its progress and the cell's KB card (its render set) while it reads, then answers."""
    ctx = parse_context(state.user_text)
    cell_id = ctx.get("cell_id", 0)
    if not state.called("get_equipment_kb"):
        return FakeReply(
            tool_calls=[
                _progress(cell_id, "reading_kb", "Reading the equipment KB.", 0),
                ("get_equipment_kb", {"cell_id": cell_id}),
            ]
        )
    result = state.result("get_equipment_kb") or {}
    answer = answer_from_kb(result.get("data", {}), ctx.get("question", ""), result.get("cell_tag", "this cell"))
    shown = [("render_equipment_kb_card", {"cell_id": cell_id})] if state.result("get_equipment_kb") else []
    return FakeReply(
        tool_calls=[
            *shown,
            _progress(cell_id, "answered", f"Answered from {answer['source']}.", 2),
            ("submit_kb_answer", answer),
        ]
    )


@fake_policy("kb_qa")
def kb_qa(state: FakeState) -> FakeReply:
    text = state.user_text
    question = text.split("\n", 1)[0].removeprefix("Question: ")
    try:
        data = json.loads(text.split("Equipment data:\n", 1)[1])
    except (IndexError, ValueError):
        return FakeReply(text=json.dumps({"answer": "No equipment data given.", "source": "none", "confidence": 0.0}))
    return FakeReply(text=json.dumps(answer_from_kb(data.get("kb", {}), question, data.get("cell_tag", ""))))
