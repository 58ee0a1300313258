"""The KB agents: `kb_builder` (agent-as-tool for the Investigator) and `answer_kb_question` (Q&A).

`answer_kb_question` is one plain engine call: no agent run, no tools, no writes, no broadcasts.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import BaseModel, Field

from core.agents.engines import get_engine, model_for
from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.agents.prompts import system_prompt_for
from core.agents.types import EngineRequest
from core.capabilities import CapabilityContext
from core.events import new_turn_id
from core.models import AgentRun
from sentinel.models import Cell
from workorders.agents.context import cell_variables, context_line, recent_failures_text
from workorders.models import EquipmentKB, FailureHistory

logger = logging.getLogger(__name__)

BUILDER = "kb_builder"
QA = "kb_qa"

BUILDER_PROMPT = """You are the KB agent of ARIA. Answer a question about one piece of equipment from its
equipment KB, failure history and logbook. Cite where the answer comes from (e.g. "kb:failure_modes.bearing_wear").
You may show your progress (render_kb_progress) and the equipment's KB card (render_equipment_kb_card).
If the KB does not say, answer so with low confidence. Finish with submit_kb_answer."""

# The KB builder's tools: its reads and its render set [EquipmentKbCard, KbProgress].
BUILDER_TOOLS = [
    "get_equipment_kb",
    "get_failure_history",
    "get_logbook_entries",
    "render_equipment_kb_card",
    "render_kb_progress",
]

QA_PROMPT = """You answer questions about one piece of equipment from its knowledge base, given as JSON.
Reply with one JSON object only: {"answer": "...", "source": "kb:<path> or history or none", "confidence": 0..1}.
If the KB does not contain the answer, say so with confidence below 0.3. Never invent values."""


class KbAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=4000)
    source: str = Field(default="kb", max_length=200)
    confidence: float = Field(ge=0.0, le=1.0)


def _no_answer(reason: str) -> dict[str, Any]:
    return {"answer": f"No answer: {reason}", "source": "none", "confidence": 0.0}


def _kb_variables(cell_id: int, question: str) -> dict[str, Any]:
    """What a published KB prompt's `{{variables}}` are filled with."""
    cell = Cell.objects.filter(pk=cell_id).first()
    return {
        **cell_variables(cell),
        "cell_id": cell_id,
        "question": question,
        "recent_failures": recent_failures_text(cell_id),
    }


def run_kb_builder(*, cell_id: int, question: str, ctx: CapabilityContext) -> dict[str, Any]:
    """Run the KB agent for a question under its own turn id, linked to the caller's turn."""
    prompt, ref = system_prompt_for(BUILDER, BUILDER_PROMPT, _kb_variables(cell_id, question))
    spec = AgentSpec(
        name=BUILDER,
        system_prompt=prompt,
        prompt_ref=ref,
        tools=BUILDER_TOOLS,
        use_case="chat",
        finish_tool=FinishTool("submit_kb_answer", "Submit the answer.", KbAnswer, finish_reason="answered"),
        max_turns=6,
        timeout_seconds=60,
    )
    parent = AgentRun.objects.filter(pk=ctx.extra.get("run_id")).first() if ctx.extra.get("run_id") else None
    # Its own turn, linked to the caller's (agent_start.parent_turn_id), so a consumer can nest it.
    child_ctx = CapabilityContext(user=ctx.user, turn_id=new_turn_id())  # the loop renames ctx.agent
    message = f"{question}\n{context_line({'cell_id': cell_id, 'question': question})}"
    result = run_agent(
        spec,
        messages=message,
        ctx=child_ctx,
        subject=("cell", cell_id),
        parent=parent,
        parent_turn_id=ctx.turn_id or None,
    )
    return result.output or _no_answer(f"the KB agent stopped ({result.finish_reason})")


def kb_qa_request(*, cell_id: int, question: str, use_case: str = "chat", fake: bool = False) -> EngineRequest:
    kb = EquipmentKB.objects.filter(cell_id=cell_id).select_related("cell").first()
    failures = FailureHistory.objects.filter(cell_id=cell_id).order_by("-failure_time")[:5]
    history = [
        {"time": f.failure_time.date().isoformat(), "mode": f.failure_mode, "root_cause": f.root_cause[:200]}
        for f in failures
    ]
    tag = kb.cell.tag if kb else str(cell_id)
    body = {"cell_id": cell_id, "cell_tag": tag, "kb": kb.data if kb else {}, "recent_failures": history}
    text = f"Question: {question}\n\nEquipment data:\n{json.dumps(body, default=str)}"
    prompt, _ref = system_prompt_for(QA, QA_PROMPT, _kb_variables(cell_id, question))
    return EngineRequest(
        agent=QA,
        system=prompt,
        messages=[{"role": "user", "content": text}],
        model="fake" if fake else model_for(use_case),
        use_case=use_case,
        max_tokens=1024,
    )


def answer_kb_question(cell_id: int, question: str) -> dict[str, Any]:
    """{answer, source, confidence} from the cell's KB. Never raises; writes and publishes nothing."""
    try:
        engine = get_engine()
        request = kb_qa_request(cell_id=cell_id, question=question, fake=engine.provider == "fake")
        turn = engine.complete(request)
        return parse_answer(turn.text)
    except Exception as exc:
        logger.exception("KB Q&A failed for cell %s", cell_id)
        return _no_answer(f"{type(exc).__name__}: {exc}")


def parse_answer(text: str) -> dict[str, Any]:
    """The model's JSON answer, validated; plain text becomes a low-confidence answer."""
    text = (text or "").strip()
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            return KbAnswer.model_validate(json.loads(text[start : end + 1])).model_dump()
        except ValueError:
            pass
    if not text:
        return _no_answer("empty reply")
    return {"answer": text[:4000], "source": "model", "confidence": 0.3}
