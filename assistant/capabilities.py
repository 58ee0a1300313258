"""What the assistant offers agents: ask_investigator (agent-as-tool), published tools."""

from __future__ import annotations

import re
import time
from typing import Any

from pydantic import BaseModel, Field

from assistant.tool_args import args_for
from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability, dispatch, job_status

START_INVESTIGATION = "workorders.start_investigation"
_WORD = re.compile(r"[^\W_]{4,}")
_RCA_KEYS = ("rca_summary", "root_cause", "failure_mode", "cause")


class AskInvestigatorInput(BaseModel):
    cell_id: int = Field(description="The cell (equipment) the question is about.")
    question: str = Field(description="The operator's question, in their words.")


def _items(content: Any) -> list[dict]:
    if isinstance(content, list):
        return [c for c in content if isinstance(c, dict)]
    if isinstance(content, dict):
        for key in ("items", "results", "work_orders", "failures", "history"):
            if isinstance(content.get(key), list):
                return [c for c in content[key] if isinstance(c, dict)]
    return []


def _text_of(item: dict) -> str:
    parts = []
    for key in _RCA_KEYS:
        value = item.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            parts.extend(str(v) for v in value.values() if isinstance(v, str))
    return " ".join(parts)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if not w.isdigit()}


def _best_rca(question: str, candidates: list[tuple[str, dict]]) -> tuple[str, dict, str] | None:
    """The cell's record that explains the question: the one sharing most words with it (a
    signal or failure mode it names, in any language), else the newest. The equipment was resolved
    before (cell_id), so no question wording is needed to find the cell's RCA."""
    asked = _content_words(question)
    best: tuple[int, int, str, dict, str] | None = None
    for order, (kind, item) in enumerate(candidates):
        text = _text_of(item)
        if not text:
            continue
        overlap = len(asked & _content_words(text))
        if best is None or overlap > best[0]:
            best = (overlap, order, kind, item, text)
    return (best[2], best[3], best[4]) if best else None


@capability(
    "assistant.ask_investigator",
    description=(
        "Ask the Investigator why a cell misbehaved (any language). Answers from the cell's recent root-cause "
        "analyses and failure history, else starts an investigation of its detected work order."
    ),
    input=AskInvestigatorInput,
    tier=Tier.SAFE,  # it may start an investigation
    scopes=(OPERATOR,),
    handoff_to="investigator",
)
def ask_investigator(ctx: CapabilityContext, params: AskInvestigatorInput) -> dict:
    sources: list[str] = []
    known = {"cell_id": params.cell_id}
    recent = dispatch("get_work_orders", args_for("get_work_orders", known), ctx=ctx)
    history = dispatch("get_failure_history", args_for("get_failure_history", known), ctx=ctx)
    candidates: list[tuple[str, dict]] = []
    if not recent.is_error:
        candidates += [("work_order", item) for item in _items(recent.content)]
    if not history.is_error:
        candidates += [("failure", item) for item in _items(history.content)]
    # A detected (not yet analysed) order is the current event: an old RCA would not explain it.
    # Only the resolved cell's records (a stand-in or a broad listing may return other cells' too).
    candidates = [(kind, item) for kind, item in candidates if item.get("cell_id") in (None, params.cell_id)]
    detected = [item for kind, item in candidates if kind == "work_order" and item.get("status") == "detected"]
    if not detected:
        found = _best_rca(params.question, candidates)
        if found:
            kind, item, text = found
            ref = f"{kind} #{item.get('id', item.get('work_order_id', '?'))}"
            sources.append(ref)
            return {
                "source": "recent_rca",
                "summary": f"From {ref}: {text[:300]}",
                "answer": text[:2000],
                "sources": sources,
                "record": item,
            }
        return {
            "source": "none",
            "summary": "No matching RCA on record and no detected work order of this cell to investigate.",
            "answer": "",
            "sources": [],
        }
    work_order_id = detected[0].get("id")
    started = dispatch(START_INVESTIGATION, args_for(START_INVESTIGATION, {"work_order_id": work_order_id}), ctx=ctx)
    if started.is_error:
        return {
            "source": "none",
            "summary": f"No matching RCA; could not start an investigation: {started.message}",
            "answer": "",
            "sources": [],
        }
    outcome = _await_job(started, ctx)
    if outcome.get("rca_summary"):
        return {
            "source": "investigation",
            "summary": f"Investigation of work_order #{work_order_id}: {outcome['rca_summary'][:300]}",
            "answer": outcome["rca_summary"],
            "sources": [f"work_order #{work_order_id}"],
            "investigation": outcome,
        }
    return {
        "source": "investigation_started",
        "summary": f"No matching RCA on record; started an investigation of work_order #{work_order_id}.",
        "investigation": {"work_order_id": work_order_id, **outcome},
        "sources": [],
    }


def _await_job(started, ctx: CapabilityContext) -> dict[str, Any]:
    """Wait (bounded) for the investigation so the operator gets the RCA in the same answer."""
    if started.job is None:
        return started.content if isinstance(started.content, dict) else {}
    wait = float(ctx.extra.get("investigator_wait_seconds", 0))
    deadline = time.monotonic() + wait
    status, details = job_status(started.job)
    while status == "pending" and time.monotonic() < deadline:
        time.sleep(1.0)
        status, details = job_status(started.job)
    return {"status": status, **details}
