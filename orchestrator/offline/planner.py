"""OFFLINE STAND-IN for the planner (fake engine only): reads the plan context from the request, looks, then submits.

With a broad goal the context carries the set's objects (read by `planning.fanout` as the owner);
the stand-in fans them out with the same per-object rule the heuristic planner uses and says what
it left out in `notes`. Otherwise it reads the goal's words (`heuristic_steps`).
"""

from __future__ import annotations

import json

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from orchestrator.planning import fanout, heuristic
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
    goal = context.get("goal", "")
    broad = context.get("broad") or {}
    if broad.get("objects") is not None:
        steps, notes = fanout.fan_out_steps(
            broad["objects"], goal, int(broad.get("step_cap") or fanout.MAX_FANOUT_STEPS)
        )
        if not steps:
            steps = [
                {"capability": fanout.ANOMALIES, "inputs": {"cell_id": c}, "depends_on": []} for c in broad["cells"]
            ]
        submitted = {"steps": steps, "notes": [n["reason"] for n in notes if n["action"] != "planned"]}
        return FakeReply(text="Plan ready (one branch per object).", tool_calls=[("submit_plan", submitted)])
    cell = context.get("cell_id")
    steps = heuristic.heuristic_steps(goal, refs, {"cell_id": cell} if cell else None)
    return FakeReply(text="Plan ready.", tool_calls=[("submit_plan", {"steps": steps})])
