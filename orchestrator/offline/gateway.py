"""OFFLINE STAND-IN: the fake model gateway of the coordinator: given a reading of the message, it chooses read
tools and actions from what those tools return.

It never looks at the message's words. A `Reading` (orchestrator/offline/reading.py) says
what the user asked for — a question, stop, skip, proceed, guidance, a revision, a delegation — and
the gateway finds the rest in state: which plan "that one" is (the plan the conversation last acted
on, else the one plan in flight; with several candidates it asks which workstream — see
offline/workstreams.py, which also handles single steps, derived plans and authoring drafts), whether an ask is open, coordinator-approvable, gated or already
requested, whether it was already decided, what failed and why, which profile ran the stopped
work and which smaller one covers it, which work order "this" is and what state it is in, and —
when the reading names equipment (P-02) — which cell that is (find_cells) and what its work
orders and signals show. The same reading in a different state gives a different action plan
(see the scenario suite), and the deterministic validator still decides what is allowed.

Tests build a gateway per turn with `fake_gateway(reading)`; the offline demo's registered
coordinator policy reads the message with `keyword_reading` first.
"""

from __future__ import annotations

from core.agents.engines.fake import FakeEngine, FakeReply, FakeState, fake_policy
from orchestrator.coordinator.schema import MUTATING
from orchestrator.offline.answers import MARKER, cell, explain, packet, submit, when
from orchestrator.offline.asks import choose_turn, needs_me_turn, not_yours, pause_turn, plan_moves, with_moves
from orchestrator.offline.reading import Reading, keyword_reading
from orchestrator.offline.workstreams import ask_which, derive_turn, draft_turn, focus_of, step_turn
from orchestrator.planning.cells import exact_cell

ACTIVE = ("running", "paused", "approved", "draft")
SIZES = {"small": 1, "large": 2}


def _refs(plan: dict | None) -> list[str]:
    return [f"{r['type']}:{r['id']}" for r in (plan or {}).get("context_refs", [])]


def _message(state: FakeState) -> str:
    return state.user_text.partition(MARKER)[0].strip()


def decide(reading: Reading, state: FakeState) -> FakeReply:
    """The next turn for `reading` given what the run has inspected so far. Every mutating action
    quotes the words that asked for it (`user_request_quote`), as a model must: the reading's quote,
    else the whole message — the validator checks them against the message in code."""
    reply = _next(reading, state)
    quote = reading.quote or _message(state)
    for name, args in reply.tool_calls:
        if name == "submit_action_plan":
            for action in args["actions"]:
                if action["type"] in MUTATING:
                    action.setdefault("user_request_quote", quote)
    return reply


def _next(reading: Reading, state: FakeState) -> FakeReply:
    context = packet(state)
    if not state.called("list_plans"):
        return FakeReply(
            thinking="Inspect plans, open asks, decided approvals and this conversation before deciding.",
            tool_calls=[
                ("list_plans", {"limit": 10}),
                ("list_pending_interactions", {}),
                ("list_approvals", {"limit": 20}),
                ("list_conversation_events", {"conversation": context.get("conversation_id", "default")}),
            ],
        )
    plans = state.result("list_plans") or []
    pending = state.result("list_pending_interactions") or []
    approvals = state.result("list_approvals") or []
    events = state.result("list_conversation_events") or []
    specialists = context.get("specialists", {})
    focus = focus_of(plans, events)
    refs = {"plan_ids": [focus["id"]] if focus else [], "conversation_event_ids": [e["event_id"] for e in events][-3:]}
    tags = list(reading.equipment)
    act = reading.act
    investigations = context.get("investigations") or []

    def which(why: str) -> FakeReply:  # nothing in focus: list the workstreams, ask, change nothing
        return ask_which(plans, _open_asks(plans, pending), investigations, refs, why)

    visible = [p for p in plans if p["status"] != "cancelled"]
    named = None  # the plan the user named by number ("plan 4"), if it is theirs: that is the focus
    if reading.plan_id and act not in ("plan", "delegate") and reading.draft_id is None:
        named = next((p for p in plans if p["id"] == reading.plan_id), None)
        if named is None:  # older than the plans listed: read it (another user's is not found)
            if not state.called("get_plan"):
                return FakeReply(tool_calls=[("get_plan", {"plan_id": reading.plan_id})])
            named = state.result("get_plan")
        if not named:
            return not_yours(reading.plan_id, refs)
        focus, refs = named, {**refs, "plan_ids": [named["id"]]}
    asks = _open_asks(plans, pending)
    if (reading.draft_id is not None or reading.drafts) and act in ("question", "explain", "proceed") and not tags:
        return draft_turn(state, reading, refs)
    if reading.waiting and act in ("question", "explain"):  # "what do you need from me?"
        return needs_me_turn(asks, refs)
    if act == "choose":  # "the second one": the open choice's option, else as any other words
        if turn := choose_turn(reading, focus, asks, refs):
            return turn
        return cell(state, tags[0], plans, refs) if tags else _clarify(focus, refs, plans, pending)
    if act in ("question", "explain") and not tags:
        if focus is None and visible and not (reading.investigation and investigations):
            return which("Nothing is in focus in this conversation and you have several plans.")
        reply = explain(state, focus, refs, pending)
        return with_moves(reply, named) if named else reply
    if act == "question":
        return cell(state, tags[0], plans, refs)
    if act == "unclear":
        return _clarify(focus, refs, plans, pending, several=reading.several)
    if act in ("stop", "skip") and reading.step is not None:
        return step_turn(reading, focus, refs) if focus else which(f"Step {reading.step} of which plan?")
    if act == "skip":
        question = {"type": "ask_clarification", "text": "Which step should I skip? Say e.g. 'skip step 2 of plan 4'."}
        return submit("Which step?", [question], refs, "no step named")
    if act == "stop":
        if focus is None and visible:
            return which("Nothing is in focus to stop.")
        return _halt(state, focus, refs, reading, specialists)
    if act in ("pause", "resume"):
        return pause_turn(act, focus, refs) if focus or not visible else which(f"Which plan should I {act}?")
    if act == "delegate":
        profiles = [p for p in reading.profiles if p in specialists]
        writers = [p for p in profiles if specialists[p].get("writes")]
        if len(writers) == 1 and len(profiles) == 1:
            return _delegate_write(state, writers[0], focus, refs, reading, specialists)
        return _delegate(state, focus, refs, profiles, specialists, reading)
    if act == "guide":
        if focus is None and visible:
            return which("Nothing is in focus to continue.")
        if focus and focus["status"] in ACTIVE:
            action = {"type": "attach_guidance", "plan_id": focus["id"], "text": reading.text}
            limits = {"cells": list(reading.equipment), "lines": list(reading.lines)}
            if any(limits.values()):  # structured: the executor skips the steps still to run outside them
                action["constraints"] = {k: v for k, v in limits.items() if v}
            return submit(
                f"Guidance for plan {focus['id']}.", [action], refs, f"plan {focus['id']} is {focus['status']}"
            )
        text = (
            f"Nothing is in flight to continue: plan {focus['id']} is {focus['status']}. {plan_moves(focus)}"
            if focus
            else "You have no plans to continue."
        )
        return submit("Nothing to guide.", [{"type": "answer", "text": text}], refs, "no active plan in focus")
    if act == "plan":  # new work: the planner drafts it; the validator refuses a duplicate of running work
        action = {"type": "create_plan", "goal": reading.text, "context_refs": []}
        return submit("Drafting a plan for approval.", [action], refs, "the user asked for new work")
    if act == "revise":
        if focus is None:
            return which("Which plan should I start from?")
        if derived := derive_turn(reading, focus, refs):
            return derived
        goal = f"{focus['goal']} — {reading.text}"
        action = {"type": "create_plan", "goal": goal, "context_refs": _refs(focus), "derived_from": focus["id"]}
        return submit(f"A new draft from plan {focus['id']}.", [action], refs, "the user asked for a changed copy")
    if focus is None and visible and not _open_asks(plans, pending):
        return which("Nothing waits for an approval in focus.")
    return _proceed(state, focus, refs, reading, plans, pending, approvals)


def _open_asks(plans: list[dict], pending: list[dict]) -> list[dict]:
    """Every open ask in sight, with its plan: the plans' own (gated ones included) and those waiting on me."""
    asks = {a["id"]: {**a, "plan_id": p["id"]} for p in plans for a in p.get("open_interactions", [])}
    return list(asks.values()) + [a for a in pending if a["id"] not in asks]


def _on_step(ask: dict, order: int) -> bool:
    # the ask's step, not its question's words: those carry the step's inputs ("key see step 3")
    return ask.get("step_order") == order


def _which_asks(reading: Reading, focus: dict | None, plans: list[dict], pending: list[dict]) -> list[dict]:
    """The asks "it" can mean: the one the user named (ask N, step N, plan N), else the focus plan's."""
    every = _open_asks(plans, pending)
    if reading.ask_id is not None:  # "ask 0" names an ask too (none has that id)
        return [a for a in every if a["id"] == reading.ask_id]
    mine = [{**a, "plan_id": focus["id"]} for a in focus["open_interactions"]] if focus else []
    mine = mine or [a for a in pending if focus is None or a["plan_id"] == focus["id"]] or pending
    if reading.step is not None:
        return [a for a in mine if _on_step(a, reading.step)] or (
            [] if reading.plan_id else [a for a in every if _on_step(a, reading.step)]
        )
    return mine


def _proceed(
    state: FakeState, focus: dict | None, refs: dict, reading: Reading, plans: list, pending: list, approvals: list
) -> FakeReply:
    """Approve what waits: the one open ask the user means; an ask already decided is reported."""
    if reading.equipment:  # the user is asking about a piece of equipment, not about "that one"
        return cell(state, reading.equipment[0], plans, refs)
    asks = _which_asks(reading, focus, plans, pending)
    if len(asks) == 1:
        return _decide(asks[0], approvals, refs)
    named = reading.step is not None or reading.ask_id is not None
    if asks or named:  # several could be meant, or none is what the user named: ask, change nothing
        which = f"step {reading.step}" if reading.step is not None else f"ask {reading.ask_id}"
        text = (
            f"Which one? Open asks: {_listing(asks)}. Say e.g. 'approve ask {asks[0]['id']}'."
            if asks
            else f"No open ask matches {which}; open asks: {_listing(_open_asks(plans, pending)) or 'none'}."
        )
        return submit("Which ask?", [{"type": "ask_clarification", "text": text}], refs, "several or no asks match")
    decided = [a for a in approvals if focus and a["plan_id"] == focus["id"] and a["status"] == "answered"]
    if decided:
        last = decided[0]
        text = (
            f"Nothing to apply: interaction {last['id']} on plan {last['plan_id']} was already decided "
            f"({last['decision']}) by {last['decided_by']} at {when(last['decided_at'])}; the plan is {last['plan_status']}."
        )
        return submit("Already decided earlier.", [{"type": "answer", "text": text}], refs, "list_approvals")
    reply = explain(state, focus, refs, pending)  # nothing to approve: what can be done with it, and where
    return with_moves(reply, focus) if focus else reply


def fake_gateway(reading: Reading) -> FakeEngine:
    """A fake engine whose coordinator acts on `reading` — what a model would have understood."""
    return FakeEngine(policies={"coordinator": lambda state: decide(reading, state)})


@fake_policy("coordinator")
def offline_coordinator(state: FakeState) -> FakeReply:
    """The offline demo: the keyword stand-in reads the message, the gateway decides from state."""
    message = state.user_text.partition(MARKER)[0]
    return decide(keyword_reading(message, packet(state).get("specialists", {})), state)


def _decide(ask: dict, approvals: list[dict], refs: dict) -> FakeReply:
    if ask.get("coordinator_approvable"):
        action = {"type": "decide_approval", "interaction_id": ask["id"], "decision": "approve"}
        return submit("Approving the checkpoint.", [action], refs, "a coordinator-approvable checkpoint is open")
    actions = [{"type": "present_approval", "interaction_id": ask["id"]}]
    requested = any(a["id"] == ask["id"] and a["approval_requested"] for a in approvals)
    if ask.get("required_scope") and not requested and not ask.get("for_you_to_decide"):
        actions.append({"type": "request_approval", "interaction_id": ask["id"], "text": "Needed to continue."})
    why = f"interaction {ask['id']} needs {'scope ' + ask['required_scope'] if ask['required_scope'] else 'you'}"
    return submit("This needs a human decision.", actions, refs, why)


def _halt(state: FakeState, focus: dict | None, refs: dict, reading: Reading, specialists: dict) -> FakeReply:
    if focus is None:
        return submit("Nothing to stop.", [{"type": "answer", "text": "No plans."}], refs, "no active plan")
    if focus["status"] not in ACTIVE:  # over: say so first, and what can still be done with it
        said = f"Nothing was stopped: plan {focus['id']} is already {focus['status']}."
        return submit(said, [{"type": "answer", "text": plan_moves(focus)}], refs, "no active plan")
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
                 "context_refs": _refs(plan)}
            )  # fmt: skip
            summary += f" Re-delegating to {smaller[0]} ({specialists[smaller[0]]['model_use_case']})."
        else:
            summary += f" No smaller profile covers what {ran or 'it'} did."
    return submit(summary, actions, refs, f"plan {focus['id']} is {focus['status']}")


def _profile_that_ran(plan: dict, specialists: dict) -> str:
    for step in plan.get("steps", []):
        named = (step.get("inputs") or {}).get("profile")
        if named in specialists:
            return named
        for name, p in specialists.items():
            if step["capability"] in p["tools"] and len(p["tools"]) == 1:
                return name
    return ""


def _named_equipment_order(state: FakeState, tag: str) -> tuple[FakeReply | None, dict, str]:
    """The newest work order on the cell the user named: (a read to make first, the order, why not)."""
    if not state.called("find_cells"):
        return FakeReply(tool_calls=[("find_cells", {"query": tag})]), {}, ""
    cell_row = exact_cell((state.result("find_cells") or {}).get("cells", []), tag)
    if cell_row is None:
        return None, {}, f"No cell is tagged {tag}."
    if not state.called("get_work_orders"):
        return FakeReply(tool_calls=[("get_work_orders", {"cell_id": cell_row["cell_id"], "limit": 5})]), {}, ""
    orders = (state.result("get_work_orders") or {}).get("work_orders", [])
    return None, (orders[0] if orders else {}), "" if orders else f"{tag} has no work orders."


def _delegate(
    state: FakeState, focus: dict | None, refs: dict, named: list[str], specialists: dict, reading: Reading
) -> FakeReply:
    """Named roles → one plan: a research step from the subject's state, then a dependent review. The
    subject is the equipment the user named, else the conversation's work order, else the newest."""
    wo_ids = [reading.work_order_id] if reading.work_order_id else []
    wo_ids = wo_ids or [r["id"] for r in (focus or {}).get("context_refs", []) if r["type"] == "work_order"]
    if reading.equipment and not reading.work_order_id:
        first, wo, missing = _named_equipment_order(state, reading.equipment[0])
        if first is not None:
            return first
        if missing:
            question = {"type": "ask_clarification", "text": f"{missing} What should be researched?"}
            return submit("Nothing to research on it.", [question], refs, "find_cells / get_work_orders")
    elif wo_ids:  # "this" is the work order the conversation's plan is about: what state is it in?
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
        return submit("Nothing to research yet.", [question], refs, "no work order found")
    subject = [f"work_order:{wo['id']}", f"cell:{wo['cell_id']}"]
    refs = {**refs, "work_order_ids": [wo["id"]]}
    covers = "investigation" if wo.get("status") == "detected" else "research"
    research = next((n for n in named if specialists[n]["covers"] == covers), None) or next(
        (n for n, p in specialists.items() if p["covers"] == covers), None
    )
    reviewer = next((n for n in named if specialists[n]["covers"] == "review"), None)
    actions = [{"type": "delegate", "profile": research, "text": "Research this: " + ", ".join(subject),
                "context_refs": subject}]  # fmt: skip
    if reviewer:
        actions.append({"type": "delegate", "profile": reviewer, "text": "Check the research result.",
                        "context_refs": subject, "depends_on": [0]})  # fmt: skip
    why = f"{subject} is the subject; its state calls for {covers}"
    return submit(f"Delegating to {' then '.join(a['profile'] for a in actions)}.", actions, refs, why)


def _delegate_write(
    state: FakeState, writer: str, focus: dict | None, refs: dict, reading: Reading, specialists: dict
) -> FakeReply:
    """A directive to a profile that writes: one step, on the work order the reading names (else the
    conversation's, else the newest) for a repair order; on the instruction itself for a draft."""
    action = {"type": "delegate", "profile": writer, "text": reading.text, "context_refs": []}
    if specialists[writer]["covers"] != "repair_order":
        why = f"{writer} writes ({specialists[writer]['runner']}): the plan gate asks before it does"
        return submit(f"Delegating to {writer}.", [action], refs, why)
    if reading.equipment and not reading.work_order_id:  # "write the repair order for P-02": that cell's order
        first, wo, missing = _named_equipment_order(state, reading.equipment[0])
        if first is not None:
            return first
        if missing:
            question = {"type": "ask_clarification", "text": f"{missing} Which work order should get a repair order?"}
            return submit("No work order to write.", [question], refs, "find_cells / get_work_orders")
        return _write_order(action, wo, refs, writer, specialists)
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
        return submit("No work order to write.", [question], refs, "get_work_order(s)")
    return _write_order(action, wo, refs, writer, specialists)


def _write_order(action: dict, wo: dict, refs: dict, writer: str, specialists: dict) -> FakeReply:
    action["context_refs"] = [f"work_order:{wo['id']}", f"cell:{wo['cell_id']}"]
    refs = {**refs, "work_order_ids": [wo["id"]]}
    why = f"work order {wo['id']} is {wo.get('status')}; {writer} writes it through {specialists[writer]['runner']}"
    return submit(f"Delegating the repair order of work order {wo['id']} to {writer}.", [action], refs, why)


def _listing(asks: list[dict]) -> str:
    return "; ".join(f"ask {a['id']} on plan {a['plan_id']}: {a['question']}" for a in asks)


def _clarify(focus: dict | None, refs: dict, plans: list[dict], pending: list[dict], several: str = "") -> FakeReply:
    """Not understood as an instruction: say so, change nothing, and say what waits and how to act."""
    waiting = _open_asks(plans, pending)
    text = "I did not understand that as an instruction, so I changed nothing."
    if several:  # one decision, several targets named: do none rather than one of them
        text = f"Your message names {several}; I act on one at a time, so I changed nothing. Say them one by one."
    if waiting:
        text += f" Waiting: {_listing(waiting)}. To approve one, say 'approve ask {waiting[0]['id']}'."
    elif focus:
        text += f" Plan {focus['id']} '{focus['goal']}' is {focus['status']}."
    text += " Ask a question (e.g. 'what happened?') or give an instruction such as 'stop that one' or 'plan: …'."
    text += " (Offline reader: English only; quoted text, questions, negations and 'what if' never act.)"
    return submit("What do you want me to do?", [{"type": "ask_clarification", "text": text}], refs, "not understood")
