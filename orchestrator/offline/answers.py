"""OFFLINE STAND-IN: what the coordinator gateway answers once it has read state: a plan explained, a cell's
work orders and signals, the Investigator's latest run. Read tools first, then one answer citing
what they returned (split from gateway.py, which decides which of these a reading calls for).
"""

from __future__ import annotations

import json
from typing import Any

from core.agents.engines.fake import FakeReply, FakeState
from core.humantime import human_time
from orchestrator.coordinator.context import PACKET_MARKER as MARKER
from orchestrator.planning.cells import exact_cell


def submit(summary: str, actions: list[dict], refs: dict[str, list[int]], rationale: str) -> FakeReply:
    plan = {"summary": summary, "rationale": rationale, "actions": actions, "references": refs}
    return FakeReply(tool_calls=[("submit_action_plan", plan)])


def when(iso: str | None) -> str:
    """A read tool's ISO timestamp as people read one: "2026-12-03 18:22 UTC" (core.humantime: to
    the minute, as the pages show times, in the plant's zone and naming it)."""
    return human_time(iso)


def packet(state: FakeState) -> dict[str, Any]:
    """The context packet the service appended to the user's message (structured state, not words)."""
    _, _, raw = state.user_text.partition(MARKER)
    return json.loads(raw) if raw else {}


def explain(state: FakeState, focus: dict | None, refs: dict, pending: list[dict]) -> FakeReply:
    if focus is None:  # no plan to explain: the latest investigation is what happened, if any
        investigations = packet(state).get("investigations") or []
        if investigations:
            return investigation(state, investigations[0], refs)
        return submit("There are no plans yet.", [{"type": "answer", "text": "You have no plans yet."}], refs, "")
    if not state.called("get_plan"):
        return FakeReply(tool_calls=[("get_plan", {"plan_id": focus["id"]})])
    plan = state.result("get_plan") or focus
    failed = [s for s in plan["steps"] if s["status"] == "failed"]
    wo_ids = [r["id"] for r in plan.get("context_refs", []) if r["type"] == "work_order"] + [
        s["inputs"]["work_order_id"] for s in failed if "work_order_id" in (s.get("inputs") or {})
    ]
    if failed and wo_ids and not state.called("get_agent_runs"):
        return FakeReply(tool_calls=[("get_agent_runs", {"work_order_id": wo_ids[0], "limit": 3})])
    steps = ", ".join(f"{s['order']}. {s['capability']} ({s['status']})" for s in plan["steps"])
    text = f"Plan {plan['id']} '{plan['goal']}' is {plan['status']}. Steps: {steps}."
    if failed:
        text += f" Step {failed[0]['order']} failed: {failed[0]['error']}"
        runs = state.result("get_agent_runs") or []
        if runs:
            run = runs[0]
            text += f" Last agent run {run['id']} ({run['agent']}) ended {run['finish_reason'] or run['status']}."
        elif wo_ids:
            text += f" No agent run was recorded for work order {wo_ids[0]}."
    asks = [a for a in plan.get("open_interactions", [])] or [a for a in pending if a["plan_id"] == plan["id"]]
    if asks:
        text += f" Waiting on: {asks[0]['question']}"
        if asks[0].get("kind") == "choice" and asks[0].get("options"):  # "which one?": say the options
            text += " Options: " + "; ".join(f"{n}. {o}" for n, o in enumerate(asks[0]["options"], start=1)) + "."
    if wo_ids:
        refs = {**refs, "work_order_ids": wo_ids[:1]}
    return submit(f"Plan {plan['id']} is {plan['status']}.", [{"type": "answer", "text": text}], refs, "get_plan")


def cell(state: FakeState, tag: str, plans: list[dict], refs: dict) -> FakeReply:
    """The named cell: find it, read its work orders and current signals, answer from those."""
    if not state.called("find_cells"):
        return FakeReply(thinking=f"The user named {tag}: find that cell.", tool_calls=[("find_cells", {"query": tag})])
    cells = (state.result("find_cells") or {}).get("cells", [])
    cell = exact_cell(cells, tag)
    refs = {**refs, "plan_ids": []}  # plans are cited only when they are about this cell
    if cell is None:
        similar = ", ".join(c["tag"] for c in cells)
        text = f"No cell is tagged {tag}." + (f" Similar tags: {similar}." if similar else "")
        return submit(f"{tag} not found.", [{"type": "answer", "text": text}], refs, "find_cells")
    cell_id = cell["cell_id"]
    if not state.called("get_work_orders"):
        return FakeReply(
            thinking=f"{tag} is cell {cell_id}: read its work orders and current signals.",
            tool_calls=[
                ("get_work_orders", {"cell_id": cell_id, "limit": 5}),
                ("get_current_signals", {"cell_id": cell_id}),
            ],
        )
    orders = (state.result("get_work_orders") or {}).get("work_orders", [])
    current = state.result("get_current_signals")
    text = f"{tag} ({cell.get('name') or 'cell ' + str(cell_id)}): "
    if orders:
        text += "work orders: " + "; ".join(
            f"#{o['id']} '{o['title']}' is {o['status']} ({o['priority']})"
            + (f", RCA: {o['rca_summary'].rstrip('.')}" if o.get("rca_summary") else "")
            for o in orders
        )
        text += "."
    else:
        text += "no work orders."
    if current is None:
        text += " Its current signals could not be read."
    else:
        abnormal = [s for s in current.get("signals", []) if s["state"] not in ("normal", "unknown")]
        text += (
            " Signals: "
            + (", ".join(f"{s['key']} {s['value']} {s['unit']} ({s['state']})" for s in abnormal) or "all normal")
            + "."
        )
    wo_ids = [o["id"] for o in orders]
    related = [
        p
        for p in plans
        if any(
            (r["type"] == "cell" and r["id"] == cell_id) or (r["type"] == "work_order" and r["id"] in wo_ids)
            for r in p.get("context_refs", [])
        )
    ]
    if related:
        text += " Plans about it: " + ", ".join(f"{p['id']} '{p['goal']}' ({p['status']})" for p in related) + "."
    refs = {**refs, "plan_ids": [p["id"] for p in related], "work_order_ids": wo_ids}
    why = f"find_cells resolved {tag} to cell {cell_id}; get_work_orders and get_current_signals"
    return submit(f"What is on {tag}.", [{"type": "answer", "text": text}], refs, why)


def investigation(state: FakeState, latest: dict, refs: dict) -> FakeReply:
    """The Investigator's latest run and its work order, read with tools, told as it happened."""
    wo_id = latest["work_order_id"]
    if not state.called("get_agent_runs"):
        return FakeReply(
            tool_calls=[
                ("get_agent_runs", {"work_order_id": wo_id, "agent": "investigator", "limit": 1}),
                ("get_work_order", {"work_order_id": wo_id}),
            ]
        )
    runs, wo = state.result("get_agent_runs") or [], state.result("get_work_order") or {}
    run = runs[0] if runs else {}
    text = f"The Investigator's latest run ({run.get('id', latest['agent_run_id'])}) on work order {wo_id}"
    text += f" is {run.get('status', latest['status'])}"
    if run.get("finish_reason"):
        text += f" ({run['finish_reason']})"
    text += f": {run['error']}." if run.get("error") else "."
    failed_tools = [s["tool"] for s in run.get("steps", []) if s["is_error"]]
    if failed_tools:
        text += f" Failed tool calls: {', '.join(failed_tools)}."
    if wo:
        text += f" Work order {wo_id} '{wo.get('title')}' is {wo.get('status')}"
        text += f", RCA: {wo['rca_summary'].rstrip('.')}." if wo.get("rca_summary") else "."
    refs = {**refs, "work_order_ids": [wo_id]}
    return submit(f"What happened to work order {wo_id}.", [{"type": "answer", "text": text}], refs, "get_agent_runs")
