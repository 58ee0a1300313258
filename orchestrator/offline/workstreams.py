"""OFFLINE STAND-IN: which workstream a reading is about, and the gateway's turns on single steps,
changed copies of plans and authoring drafts (split from gateway.py, which routes readings here).

- Focus: the plan the conversation last acted on or cited; else the one plan in flight; else the
  one plan that ran (completed/failed); else the one draft plan. Several candidates, or only
  cancelled plans, is no focus: the gateway asks which workstream and lists them — it never picks
  the newest plan for the user.
- Steps: "stop step 2" stops it if it runs or waits (what is built on it then does not run), skips
  it if it has not started; "skip step 2" skips a step that has not started, and for one already
  running says it cannot be skipped and puts the stop forward for the user to confirm.
- Derived plans: "same as plan 4 but without step 2" drafts a copy without those steps
  (`derive_plan`: the new plan records `derived_from` and what was removed).
- Drafts: the user's drafts in review and the ones waiting for them as an approver are read with
  `list_draft_reviews` / `get_draft_review`; a draft is presented (who it waits for, the link,
  published at T by X once published) and decided only when the reading asked for a decision the
  draft's `your_moves` allows — otherwise the decision is put forward for the user to confirm.
"""

from __future__ import annotations

import re

from core.agents.engines.fake import FakeReply, FakeState
from orchestrator.offline.answers import submit
from orchestrator.offline.asks import plan_moves
from orchestrator.offline.reading import Reading

IN_FLIGHT = ("running", "paused", "approved")
RAN = ("completed", "failed")
FINISHED = ("completed", "cancelled", "failed")
IN_REVIEW = ("tested", "reviewing", "approved", "publish_failed")
STOPPABLE = ("running", "waiting_job", "waiting_interaction")
SKIPPABLE = ("pending", "waiting_interaction")
REMOVAL = re.compile(r"\b(?:without|minus|except|drop|skip|remove|leave\s+out|no\s+more)\b", re.I)


def focus_of(plans: list[dict], events: list[dict]) -> dict | None:
    """'That one' (see the module docstring); None when the user has to say which."""
    by_id = {p["id"]: p for p in plans}
    for event in reversed(events):
        for plan_id in [a.get("plan_id") for a in reversed(event["actions"])] + event.get("plan_ids", []):
            if plan_id in by_id:
                return by_id[plan_id]
    for statuses in (IN_FLIGHT, RAN, ("draft",)):
        candidates = [p for p in plans if p["status"] in statuses]
        if candidates:
            return candidates[0] if len(candidates) == 1 else None
    return None


def ask_which(plans: list[dict], asks: list[dict], investigations: list[dict], refs: dict, why: str) -> FakeReply:
    """Nothing is in focus: name the workstreams the user has and ask which one, change nothing."""
    lines = [f"plan {p['id']} '{p['goal'][:80]}' ({p['status']})" for p in plans if p["status"] != "cancelled"][:8]
    lines += [f"ask {a['id']} on plan {a['plan_id']}: {a['question'][:80]}" for a in asks][:5]
    lines += [f"investigation of work order {i['work_order_id']} ({i['status']})" for i in investigations][:3]
    text = f"{why} Which one do you mean? " + (
        "Your workstreams: " + "; ".join(lines) + "." if lines else "You have no plans, asks or investigations."
    )
    text += " Name it (e.g. 'plan 4', 'draft 2', 'what happened on P-02?')."
    return submit("Which workstream?", [{"type": "ask_clarification", "text": text}], refs, "nothing is in focus")


def dependents(plan: dict, order: int) -> list[int]:
    """The orders of the steps built on step `order` of `plan`, directly or through other steps."""
    found: set[int] = set()
    grew = True
    while grew:
        grew = False
        for step in plan["steps"]:
            if step["order"] not in found and ({order} | found) & set(step.get("depends_on") or []):
                found.add(step["order"])
                grew = True
    return sorted(found)


def _listed(orders: list[int]) -> str:
    return ("step " if len(orders) == 1 else "steps ") + ", ".join(map(str, orders))


def step_turn(reading: Reading, plan: dict, refs: dict) -> FakeReply:
    """Stop or skip one step of `plan`, as the user said and its state allows. A stop cuts the step off:
    what is built on it does not run. A skip leaves out a step that has not started: the rest runs.
    A skip asked of a step already running is not turned into a stop: that is put forward to confirm."""
    step = next((s for s in plan["steps"] if s["order"] == reading.step), None)
    if step is None:
        orders = ", ".join(str(s["order"]) for s in plan["steps"])
        text = f"Plan {plan['id']} has no step {reading.step} (its steps: {orders}); I changed nothing."
        return submit("No such step.", [{"type": "answer", "text": text}], refs, "get_plan")
    order, after = step["order"], dependents(plan, step["order"])
    base = {"plan_id": plan["id"], "step": order}
    why = f"step {order} is {step['status']}"
    if plan["status"] in FINISHED:  # its steps are final, whatever state each was left in
        said = f"Nothing was {reading.act}ped: plan {plan['id']} is already {plan['status']}."
        text = f"Step {order} ({step['capability']}) stays {step['status']}. {plan_moves(plan)}"
        return submit(said, [{"type": "answer", "text": text}], refs, f"plan {plan['id']} is {plan['status']}")
    if step["status"] not in STOPPABLE and step["status"] not in SKIPPABLE:
        text = f"Step {order} ({step['capability']}) of plan {plan['id']} is already {step['status']}."
        return submit("Nothing to stop.", [{"type": "answer", "text": text}], refs, f"the step is {step['status']}")
    if reading.act == "skip" and step["status"] not in SKIPPABLE:  # started: only a stop can end it
        text = f"Step {order} of plan {plan['id']} is {step['status']}: it has started, so it cannot be skipped."
        text += f" Stopping it would also keep {_listed(after)} from running." if after else ""
        actions = [{"type": "answer", "text": text}, {"type": "stop_step", **base, "user_request_quote": ""}]
        return submit(f"Step {order} cannot be skipped.", actions, refs, why)
    if reading.act == "stop" and step["status"] in STOPPABLE:
        cut = f"; {_listed(after)} depend{'s' if len(after) == 1 else ''} on it and will not run" if after else ""
        return submit(f"Stopping step {order}{cut}.", [{"type": "stop_step", **base}], refs, why)
    rest = f"; {_listed(after)} will run without it" if after else ""
    started = "" if reading.act == "skip" else f" It has not started, so it is skipped rather than stopped{rest}."
    summary = f"Skipping step {order}{rest if reading.act == 'skip' else ''}.{started}"
    return submit(summary, [{"type": "skip_step", **base}], refs, why)


def derive_turn(reading: Reading, plan: dict, refs: dict) -> FakeReply | None:
    """A copy of `plan` without the steps the user named (by number, or by what they do); None when
    the reading names no step of it (the caller re-plans from a changed goal instead)."""
    orders = {s["order"] for s in plan["steps"]}
    named = [o for o in reading.without if o in orders]
    if reading.without and not named:
        text = f"Plan {plan['id']} has no step {', '.join(map(str, reading.without))}; I changed nothing."
        return submit("No such step.", [{"type": "answer", "text": text}], refs, "list_plans")
    if not named and REMOVAL.search(reading.text):  # "without the investigation": a step the words name
        words = {w for w in re.findall(r"[a-z]{4,}", reading.text.lower()) if w not in ("without", "step", "steps")}
        named = [
            s["order"]
            for s in plan["steps"]
            if any(w[:6] in part for w in words for part in re.split(r"[._]", s["capability"]))
        ]
    if not named:
        return None
    action = {"type": "derive_plan", "plan_id": plan["id"], "remove_steps": sorted(named)}
    return submit(f"A copy of plan {plan['id']} without step(s) {', '.join(map(str, sorted(named)))}.", [action], refs,
                  "the user asked for the same plan with steps left out")  # fmt: skip


def draft_turn(state: FakeState, reading: Reading, refs: dict) -> FakeReply:
    """The draft the user means: read its review state, then present it, decide it or ask which."""
    if reading.draft_id is not None:
        if not state.called("get_draft_review"):
            return FakeReply(tool_calls=[("get_draft_review", {"draft_id": reading.draft_id})])
        row = state.result("get_draft_review")
        if row is None:  # not theirs and not waiting for them: indistinguishable from missing
            text = f"Draft {reading.draft_id} is not among your drafts or those waiting for you; I changed nothing."
            return submit("No such draft.", [{"type": "answer", "text": text}], refs, "get_draft_review")
        return _present_or_decide(row, reading, refs)
    if not state.called("list_draft_reviews"):
        return FakeReply(tool_calls=[("list_draft_reviews", {"limit": 10})])
    rows = state.result("list_draft_reviews") or []
    wanted = reading.decision if reading.act == "proceed" else ""
    waiting = [r for r in rows if r["status"] in IN_REVIEW]
    mine = [r for r in waiting if wanted in r["your_moves"]] if wanted else []
    chosen = mine or waiting or rows[:1]
    if len(chosen) == 1:
        return _present_or_decide(chosen[0], reading, refs)
    if not chosen:
        text = "No authoring draft of yours is in review, and none waits for you."
        return submit("No drafts in review.", [{"type": "answer", "text": text}], refs, "list_draft_reviews")
    listing = "; ".join(
        f"draft {r['draft_id']} {r['type']} '{r['name']}' by {r['owner']} ({r['status']})" for r in chosen
    )
    text = f"Which draft? {listing}. Say e.g. 'approve draft {chosen[0]['draft_id']}'."
    return submit("Which draft?", [{"type": "ask_clarification", "text": text}], refs, "several drafts match")


def _present_or_decide(row: dict, reading: Reading, refs: dict) -> FakeReply:
    refs = {**refs, "plan_ids": [], "draft_ids": [row["draft_id"]]}
    draft_id, moves = row["draft_id"], row["your_moves"]
    wanted = reading.decision if reading.act == "proceed" else ""
    if wanted and wanted in moves:
        action = {"type": "decide_approval", "draft_id": draft_id, "decision": wanted}
        return submit(f"Deciding draft {draft_id}.", [action], refs, f"{wanted} is one of your moves on it")
    actions = [{"type": "present_approval", "draft_id": draft_id}]
    if moves and reading.act == "question":  # put forward, never done: the words did not ask for this move
        actions.append(
            {"type": "decide_approval", "draft_id": draft_id, "decision": moves[0], "user_request_quote": ""}
        )
    why = f"draft {draft_id} is {row['status']}; your moves: {', '.join(moves) or 'none'}"
    return submit(f"Draft {draft_id}.", actions, refs, why)
