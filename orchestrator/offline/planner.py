"""OFFLINE STAND-IN for the planner (fake engine only): reads the plan context from the request, looks, then submits."""

from __future__ import annotations

import json

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from orchestrator.planning.heuristic import heuristic_steps
from orchestrator.planning.model import CONTEXT_MARKER


@fake_policy("planner")
def planner(state: FakeState) -> FakeReply:
    text = state.user_text
    context = json.loads(text.split(CONTEXT_MARKER, 1)[1]) if CONTEXT_MARKER in text else {"goal": text}
    refs = context.get("context_refs") or []
    work_orders = [r["id"] for r in refs if r.get("type") == "work_order"]
    if work_orders and "get_work_order" in state.tool_names and not state.called("get_work_order"):
        return FakeReply(
            thinking="Look at the work order before planning.",
            tool_calls=[("get_work_order", {"work_order_id": work_orders[0]})],
        )
    steps = heuristic_steps(context.get("goal", ""), refs)
    return FakeReply(text="Plan ready.", tool_calls=[("submit_plan", {"steps": steps})])
