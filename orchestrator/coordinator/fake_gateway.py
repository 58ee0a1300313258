"""The fake model gateway of the coordinator: given a reading of the message, it chooses read
tools and actions from what those tools return.

It never looks at the message's words. A `Reading` (orchestrator/coordinator/reading.py) says
what the user asked for — a question, stop, proceed, guidance, a revision, a delegation — and the
gateway finds the rest in state: which plan "that one" is (the plan the conversation last acted
on, else the newest in flight), whether an ask is open, coordinator-approvable, gated or already
requested, whether it was already decided, what failed and why, which profile ran the stopped
work and which smaller one covers it, which work order "this" is and what state it is in, and —
when the reading names equipment (P-02) — which cell that is (find_cells) and what its work
orders and signals show. The same reading in a different state gives a different action plan
(see the scenario suite), and the deterministic validator still decides what is allowed.

Tests build a gateway per turn with `fake_gateway(reading)`; the offline demo's registered
coordinator policy reads the message with `keyword_reading` first.
"""

from __future__ import annotations

import json
from typing import Any

from core.agents.engines.fake import FakeEngine, FakeReply, FakeState, fake_policy
from orchestrator.coordinator.reading import Reading, keyword_reading
from orchestrator.planning.cells import exact_cell

MARKER = "COORDINATOR_CONTEXT_JSON:"
ACTIVE = ("running", "paused", "approved", "draft")
SIZES = {"small": 1, "large": 2}


def _submit(summary: str, actions: list[dict], refs: dict[str, list[int]], rationale: str) -> FakeReply:
    plan = {"summary": summary, "rationale": rationale, "actions": actions, "references": refs}
    return FakeReply(tool_calls=[("submit_action_plan", plan)])


def _focus(plans: list[dict], events: list[dict]) -> dict | None:
    """'That one': the plan the conversation last acted on or cited, else the newest in flight
    (running, paused, approved), else the newest plan — an untouched older draft is not news."""
    by_id = {p["id"]: p for p in plans}
    for event in reversed(events):
        for plan_id in [a.get("plan_id") for a in reversed(event["actions"])] + event.get("plan_ids", []):
            if plan_id in by_id:
                return by_id[plan_id]
    in_flight = [p for p in plans if p["status"] in ACTIVE and p["status"] != "draft"]
    return in_flight[0] if in_flight else (plans[0] if plans else None)


def _refs(plan: dict | None) -> list[str]:
    return [f"{r['type']}:{r['id']}" for r in (plan or {}).get("context_refs", [])]


def _packet(state: FakeState) -> dict[str, Any]:
    """The context packet the service appended to the user's message (structured state, not words)."""
    _, _, raw = state.user_text.partition(MARKER)
    return json.loads(raw) if raw else {}


def decide(reading: Reading, state: FakeState) -> FakeReply:
    """The next turn for `reading` given what the run has inspected so far."""
    packet = _packet(state)
    if not state.called("list_plans"):
        return FakeReply(
            thinking="Inspect plans, open asks, decided approvals and this conversation before deciding.",
            tool_calls=[
                ("list_plans", {"limit": 10}),
                ("list_pending_interactions", {}),
                ("list_approvals", {"limit": 20}),
                ("list_conversation_events", {"conversation": packet.get("conversation_id", "default")}),
            ],
        )
    plans = state.result("list_plans") or []
    pending = state.result("list_pending_interactions") or []
    approvals = state.result("list_approvals") or []
    events = state.result("list_conversation_events") or []
    specialists = packet.get("specialists", {})
    focus = _focus(plans, events)
    refs = {"plan_ids": [focus["id"]] if focus else [], "conversation_event_ids": [e["event_id"] for e in events][-3:]}
    tags = list(reading.equipment)
    act = reading.act

    if act == "question":
        return _cell(state, tags[0], plans, refs) if tags else _explain(state, focus, refs, pending)
    if act == "explain":
        return _explain(state, focus, refs, pending)
    if act == "stop":
        return _halt(state, focus, refs, reading, specialists)
    if act == "delegate":
        profiles = [p for p in reading.profiles if p in specialists]
        writers = [p for p in profiles if specialists[p].get("writes")]
        if len(writers) == 1 and len(profiles) == 1:
            return _delegate_write(state, writers[0], focus, refs, reading, specialists)
        return _delegate(state, focus, refs, profiles, specialists)
    if act == "guide":
        if focus and focus["status"] in ACTIVE:
            action = {"type": "attach_guidance", "plan_id": focus["id"], "text": reading.text}
            return _submit(
                f"Guidance for plan {focus['id']}.", [action], refs, f"plan {focus['id']} is {focus['status']}"
            )
        text = (
            f"Nothing is in flight to continue: plan {focus['id']} is {focus['status']}. "
            "Say if you want a new plan with that constraint."
            if focus
            else "You have no plans to continue."
        )
        return _submit("Nothing to guide.", [{"type": "answer", "text": text}], refs, "no active plan in focus")
    if act == "plan":  # new work: the planner drafts it; the validator refuses a duplicate of running work
        action = {"type": "create_plan", "goal": reading.text, "context_refs": [], "explicit_request": True}
        return _submit("Drafting a plan for approval.", [action], refs, "the user asked for new work")
    if act == "revise":
        if focus is None:
            question = {"type": "ask_clarification", "text": "Which plan should I start from?"}
            return _submit("No earlier plan.", [question], refs, "list_plans returned none")
        goal = f"{focus['goal']} — {reading.text}"
        action = {"type": "create_plan", "goal": goal, "context_refs": _refs(focus), "explicit_request": True}
        return _submit(f"A new draft from plan {focus['id']}.", [action], refs, "the user asked for a changed copy")
    return _proceed(state, focus, refs, tags, plans, pending, approvals)


def _proceed(
    state: FakeState, focus: dict | None, refs: dict, tags: list[str], plans: list, pending: list, approvals: list
) -> FakeReply:
    """Go ahead with what waits: the focus plan's open ask; an ask already decided is reported."""
    if tags:  # the user is asking about a piece of equipment, not about "that one"
        return _cell(state, tags[0], plans, refs)
    # the focus plan's own open asks (gated ones wait on someone else, so they are not "pending" for me)
    mine = [{**a, "plan_id": focus["id"]} for a in focus["open_interactions"]] if focus else []
    mine = mine or [a for a in pending if focus is None or a["plan_id"] == focus["id"]] or pending
    if mine:
        return _decide(mine[0], approvals, refs)
    decided = [a for a in approvals if focus and a["plan_id"] == focus["id"] and a["status"] == "answered"]
    if decided:
        last = decided[0]
        text = (
            f"Nothing to apply: interaction {last['id']} on plan {last['plan_id']} was already decided "
            f"({last['decision']}) by {last['decided_by']} at {last['decided_at']}; the plan is {last['plan_status']}."
        )
        return _submit("Already decided earlier.", [{"type": "answer", "text": text}], refs, "list_approvals")
    return _explain(state, focus, refs, pending)


def fake_gateway(reading: Reading) -> FakeEngine:
    """A fake engine whose coordinator acts on `reading` — what a model would have understood."""
    return FakeEngine(policies={"coordinator": lambda state: decide(reading, state)})


@fake_policy("coordinator")
def offline_coordinator(state: FakeState) -> FakeReply:
    """The offline demo: the keyword stand-in reads the message, the gateway decides from state."""
    message = state.user_text.partition(MARKER)[0]
    return decide(keyword_reading(message, _packet(state).get("specialists", {})), state)


def _decide(ask: dict, approvals: list[dict], refs: dict) -> FakeReply:
    if ask.get("coordinator_approvable"):
        action = {"type": "decide_approval", "interaction_id": ask["id"], "decision": "approve"}
        return _submit("Approving the checkpoint.", [action], refs, "a coordinator-approvable checkpoint is open")
    actions = [{"type": "present_approval", "interaction_id": ask["id"]}]
    requested = any(a["id"] == ask["id"] and a["approval_requested"] for a in approvals)
    if ask.get("required_scope") and not requested:
        actions.append({"type": "request_approval", "interaction_id": ask["id"], "text": "Needed to continue."})
    why = f"interaction {ask['id']} needs {'scope ' + ask['required_scope'] if ask['required_scope'] else 'you'}"
    return _submit("This needs a human decision.", actions, refs, why)


def _halt(state: FakeState, focus: dict | None, refs: dict, reading: Reading, specialists: dict) -> FakeReply:
    if focus is None or focus["status"] not in ACTIVE:
        text = f"Nothing is running to stop; plan {focus['id']} is {focus['status']}." if focus else "No plans."
        return _submit("Nothing to stop.", [{"type": "answer", "text": text}], refs, "no active plan")
    actions = [{"type": "cancel_plan", "plan_id": focus["id"]}]
    summary = f"Stopping plan {focus['id']}."
    if reading.smaller:
        if not state.called("get_plan"):
            return FakeReply(tool_calls=[("get_plan", {"plan_id": focus["id"]})])
        plan = state.result("get_plan") or focus
        ran = _profile_that_ran(plan, specialists)
        current = specialists.get(ran, {})
        smaller = [
            name
            for name, p in specialists.items()
            if p["covers"] == current.get("covers") and SIZES[p["size"]] < SIZES[current.get("size", "small")]
        ]
        if smaller:
            actions.append(
                {"type": "delegate", "profile": smaller[0], "goal": plan["goal"], "text": plan["goal"],
                 "context_refs": _refs(plan), "explicit_request": True}
            )  # fmt: skip
            summary += f" Re-delegating to {smaller[0]} ({specialists[smaller[0]]['model_use_case']})."
        else:
            summary += f" No smaller profile covers what {ran or 'it'} did."
    return _submit(summary, actions, refs, f"plan {focus['id']} is {focus['status']}")


def _profile_that_ran(plan: dict, specialists: dict) -> str:
    for step in plan.get("steps", []):
        named = (step.get("inputs") or {}).get("profile")
        if named in specialists:
            return named
        for name, p in specialists.items():
            if step["capability"] in p["tools"] and len(p["tools"]) == 1:
                return name
    return ""


def _delegate(state: FakeState, focus: dict | None, refs: dict, named: list[str], specialists: dict) -> FakeReply:
    """Named roles → one plan: a research step from the subject's state, then a dependent review."""
    wo_ids = [r["id"] for r in (focus or {}).get("context_refs", []) if r["type"] == "work_order"]
    if wo_ids:  # "this" is the work order the conversation's plan is about: what state is it in?
        if not state.called("get_work_order"):
            return FakeReply(tool_calls=[("get_work_order", {"work_order_id": wo_ids[0]})])
        wo = state.result("get_work_order") or {}
    else:  # nothing in the conversation: the newest work order
        if not state.called("get_work_orders"):
            return FakeReply(tool_calls=[("get_work_orders", {"limit": 5})])
        orders = (state.result("get_work_orders") or {}).get("work_orders", [])
        wo = orders[0] if orders else {}
    if not wo.get("id"):
        question = {"type": "ask_clarification", "text": "Which work order should be researched?"}
        return _submit("Nothing to research yet.", [question], refs, "no work order found")
    subject = [f"work_order:{wo['id']}", f"cell:{wo['cell_id']}"]
    refs = {**refs, "work_order_ids": [wo["id"]]}
    covers = "investigation" if wo.get("status") == "detected" else "research"
    research = next((n for n in named if specialists[n]["covers"] == covers), None) or next(
        (n for n, p in specialists.items() if p["covers"] == covers), None
    )
    reviewer = next((n for n in named if specialists[n]["covers"] == "review"), None)
    actions = [{"type": "delegate", "profile": research, "text": "Research this: " + ", ".join(subject),
                "context_refs": subject, "explicit_request": True}]  # fmt: skip
    if reviewer:
        actions.append({"type": "delegate", "profile": reviewer, "text": "Check the research result.",
                        "context_refs": subject, "depends_on": [0], "explicit_request": True})  # fmt: skip
    why = f"{subject} is the subject; its state calls for {covers}"
    return _submit(f"Delegating to {' then '.join(a['profile'] for a in actions)}.", actions, refs, why)


def _delegate_write(
    state: FakeState, writer: str, focus: dict | None, refs: dict, reading: Reading, specialists: dict
) -> FakeReply:
    """A directive to a profile that writes: one step, on the work order the reading names (else the
    conversation's, else the newest) for a repair order; on the instruction itself for a draft."""
    action = {"type": "delegate", "profile": writer, "text": reading.text, "context_refs": [], "explicit_request": True}
    if specialists[writer]["covers"] != "repair_order":
        why = f"{writer} writes ({specialists[writer]['runner']}): the plan gate asks before it does"
        return _submit(f"Delegating to {writer}.", [action], refs, why)
    wo_ids = (
        [reading.work_order_id]
        if reading.work_order_id
        else [r["id"] for r in (focus or {}).get("context_refs", []) if r["type"] == "work_order"]
    )
    if wo_ids:
        if not state.called("get_work_order"):
            return FakeReply(tool_calls=[("get_work_order", {"work_order_id": wo_ids[0]})])
        wo = state.result("get_work_order") or {}
    else:
        if not state.called("get_work_orders"):
            return FakeReply(tool_calls=[("get_work_orders", {"limit": 5})])
        wo = next(iter((state.result("get_work_orders") or {}).get("work_orders", [])), {})
    if not wo.get("id"):
        which = f"Work order {wo_ids[0]} was not found." if wo_ids else "No work order found."
        question = {"type": "ask_clarification", "text": f"{which} Which work order should get a repair order?"}
        return _submit("No work order to write.", [question], refs, "get_work_order(s)")
    action["context_refs"] = [f"work_order:{wo['id']}", f"cell:{wo['cell_id']}"]
    refs = {**refs, "work_order_ids": [wo["id"]]}
    why = f"work order {wo['id']} is {wo.get('status')}; {writer} writes it through {specialists[writer]['runner']}"
    return _submit(f"Delegating the repair order of work order {wo['id']} to {writer}.", [action], refs, why)


def _explain(state: FakeState, focus: dict | None, refs: dict, pending: list[dict]) -> FakeReply:
    if focus is None:  # no plan to explain: the latest investigation is what happened, if any
        investigations = _packet(state).get("investigations") or []
        if investigations:
            return _investigation(state, investigations[0], refs)
        return _submit("There are no plans yet.", [{"type": "answer", "text": "You have no plans yet."}], refs, "")
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
    if wo_ids:
        refs = {**refs, "work_order_ids": wo_ids[:1]}
    return _submit(f"Plan {plan['id']} is {plan['status']}.", [{"type": "answer", "text": text}], refs, "get_plan")


def _cell(state: FakeState, tag: str, plans: list[dict], refs: dict) -> FakeReply:
    """The named cell: find it, read its work orders and current signals, answer from those."""
    if not state.called("find_cells"):
        return FakeReply(thinking=f"The user named {tag}: find that cell.", tool_calls=[("find_cells", {"query": tag})])
    cells = (state.result("find_cells") or {}).get("cells", [])
    cell = exact_cell(cells, tag)
    refs = {**refs, "plan_ids": []}  # plans are cited only when they are about this cell
    if cell is None:
        similar = ", ".join(c["tag"] for c in cells)
        text = f"No cell is tagged {tag}." + (f" Similar tags: {similar}." if similar else "")
        return _submit(f"{tag} not found.", [{"type": "answer", "text": text}], refs, "find_cells")
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
    return _submit(f"What is on {tag}.", [{"type": "answer", "text": text}], refs, why)


def _investigation(state: FakeState, latest: dict, refs: dict) -> FakeReply:
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
    return _submit(f"What happened to work order {wo_id}.", [{"type": "answer", "text": text}], refs, "get_agent_runs")
