"""OFFLINE STAND-IN: the gateway's turns on what waits for the user and on plans named by number
(split from gateway.py, which routes readings here).

- "What do you need from me?": every open ask waiting on the user is presented (`present_approval`;
  a choice with its options), or the answer says nothing waits.
- "The second one", "option 2", "P-02A": the answer to the open choice ("which one did you mean?")
  — the one open choice, else the named plan's, else the focus plan's; several, and it asks which.
  The option is resolved from the ask's listed options; words that name none of them get the options
  back and change nothing. The answer goes through `answer_choice` (the Plans page's answer path).
- "Pause plan 4" / "resume plan 4": the move when the plan is running / paused; otherwise the answer
  leads with why nothing changed ("Nothing was paused: plan 4 is draft.") and what can be done.
- A plan named by number ("what about plan 4?", "carry on with plan 4") is answered about that plan —
  its state and what can be done with it — instead of asking which workstream.
"""

from __future__ import annotations

from core.agents.engines.fake import FakeReply
from orchestrator.offline.answers import submit
from orchestrator.offline.reading import Reading


def open_choices(plans: list[dict], pending: list[dict]) -> list[dict]:
    """Every open choice ask in sight, with its plan id and options."""
    found = {a["id"]: {**a, "plan_id": p["id"]} for p in plans for a in p.get("open_interactions", [])}
    found.update({a["id"]: a for a in pending if a["id"] not in found})
    return [a for a in found.values() if a.get("kind") == "choice"]


def _options(ask: dict) -> str:
    return "; ".join(f"{n}. {o}" for n, o in enumerate(ask.get("options") or [], start=1))


def _option(reading: Reading, options: list[str]) -> str | None:
    if reading.option is not None:
        index = len(options) - 1 if reading.option == -1 else reading.option - 1
        return options[index] if 0 <= index < len(options) else None
    return next((o for o in options if o.lower() == reading.pick.lower()), None)


def choose_turn(reading: Reading, focus: dict | None, asks: list[dict], refs: dict) -> FakeReply | None:
    """Answer the open choice the user means with the option they named; None when no choice is open."""
    choices = [a for a in asks if a.get("kind") == "choice"]
    if reading.plan_id:
        choices = [a for a in choices if a["plan_id"] == reading.plan_id]
    elif len(choices) > 1 and focus is not None:
        choices = [a for a in choices if a["plan_id"] == focus["id"]] or choices
    if not choices:
        return None
    if len(choices) > 1:
        listing = " ".join(f"Ask {a['id']} on plan {a['plan_id']}: {a['question']} ({_options(a)})." for a in choices)
        text = f"Several choices wait for you; which one do you answer? {listing} Say e.g. 'P-02 for plan N'."
        return submit("Which choice?", [{"type": "ask_clarification", "text": text}], refs, "several choices open")
    ask = choices[0]
    refs = {**refs, "plan_ids": [ask["plan_id"]]}
    option = _option(reading, list(ask.get("options") or []))
    if option is None:
        said = reading.pick or (f"option {reading.option}" if reading.option != -1 else "the last one")
        text = (
            f"'{said}' is not one of the options of ask {ask['id']} on plan {ask['plan_id']} ({ask['question']}): "
            f"{_options(ask)}. I changed nothing; say which, e.g. 'the first one' or '{ask['options'][0]}'."
        )
        return submit("Not one of the options.", [{"type": "answer", "text": text}], refs, "no option matches")
    action = {"type": "answer_choice", "interaction_id": ask["id"], "choice": option}
    why = f"ask {ask['id']} asks '{ask['question']}'; the user named {option}"
    return submit(f"Answering ask {ask['id']} with {option}.", [action], refs, why)


def needs_me_turn(asks: list[dict], refs: dict) -> FakeReply:
    """What waits for the user: each open ask presented (a choice with its options), at most five."""
    if not asks:
        text = "Nothing waits for you: no plan of yours has an open question or approval."
        return submit("Nothing waits for you.", [{"type": "answer", "text": text}], refs, "no open asks")
    ordered = sorted(asks, key=lambda a: (a.get("kind") != "choice", a["id"]))[:5]
    said = {"type": "answer", "text": f"{len(asks)} open ask(s) wait for you:"}
    actions = [said] + [{"type": "present_approval", "interaction_id": a["id"]} for a in ordered]
    # cite only the user's own plans: another's plan, whose gated ask they decide, is not theirs to open
    refs = {**refs, "plan_ids": sorted({a["plan_id"] for a in ordered if not a.get("for_you_to_decide")})}
    return submit(f"{len(asks)} ask(s) wait for you.", actions, refs, "list_plans / list_pending_interactions")


def plan_moves(plan: dict) -> str:
    """What can be done with a plan in its state, in the words the coordinator understands."""
    n, status = plan["id"], plan["status"]
    asks = plan.get("open_interactions") or []
    choice = next((a for a in asks if a.get("kind") == "choice"), None)
    if choice is not None:
        return f"It waits for your choice first: {choice['question']} Options: {_options(choice)}."
    if asks:
        return f"It waits for: {asks[0]['question']}"
    return {
        "draft": f"You can approve it on the Plans page and execute it, skip a step ('skip step 2 of plan {n}') "
        f"or cancel it ('cancel plan {n}').",
        "approved": f"Execute it on the Plans page, or cancel it ('cancel plan {n}').",
        "running": f"You can stop one step ('stop step 2 of plan {n}'), add guidance ('carry on, but only line 2'), "
        f"pause it ('pause plan {n}') or cancel it ('cancel plan {n}').",
        "paused": f"Resume it on the Plans page ('resume plan {n}'), or cancel it ('cancel plan {n}').",
    }.get(
        status,
        f"It is over ({status}); to do it again, draft a copy ('same as plan {n} but without step 2') or a new plan.",
    )


def pause_turn(act: str, plan: dict | None, refs: dict) -> FakeReply:
    """Pause a running plan, or resume a paused one; otherwise say why nothing changed, first."""
    if plan is None:
        return submit("No plans.", [{"type": "answer", "text": "You have no plans."}], refs, "no plan")
    n, status = plan["id"], plan["status"]
    if status != ("running" if act == "pause" else "paused"):
        said = f"Nothing was {act}d: plan {n} is {status}."
        return submit(said, [{"type": "answer", "text": plan_moves(plan)}], refs, f"plan {n} is {status}")
    verb = "Pausing" if act == "pause" else "Resuming"
    return submit(f"{verb} plan {n}.", [{"type": f"{act}_plan", "plan_id": n}], refs, f"plan {n} is {status}")


def with_moves(reply: FakeReply, plan: dict) -> FakeReply:
    """A reply answering about `plan`, with what can be done with it added to its answer."""
    for name, args in reply.tool_calls:
        if name == "submit_action_plan":
            for action in args["actions"]:
                if action["type"] == "answer" and plan_moves(plan) not in action["text"]:
                    action["text"] = f"{action['text']} {plan_moves(plan)}"
                    return reply
    return reply


def not_yours(plan_id: int, refs: dict) -> FakeReply:
    text = f"Plan {plan_id} is not among your plans, so I changed nothing."
    return submit("No such plan.", [{"type": "answer", "text": text}], {**refs, "plan_ids": []}, "list_plans")
