"""Broad goals fan out into per-object steps ("investigate all open alarms on line 1 and prepare
work orders" → for each open alarm's work order: investigate it, then have its repair order written).

`broad_goal(goal)` says whether a goal ranges over a set (the words are in
`orchestrator.planning.phrases`). `find_objects` reads the set through the read capabilities
as the plan owner, over the cells of the goal's scope (`planning.scope`): open alarms with the work
order each raised, or work orders by status. `fan_out_steps` turns the objects into steps with
dependencies (each repair order after its own investigation) under a step cap; what is capped,
already done or has no work order is a planner note. The model planner gets the same objects in
its context and proposes the steps itself; the cap and the scope are enforced after it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from orchestrator.planning import phrases as words
from orchestrator.planning.cells import read
from orchestrator.planning.scope import Scope

MAX_FANOUT_STEPS = 20
INVESTIGATE = "workorders.start_investigation"
REPAIR = "workorders.generate_repair_order"
ANOMALIES = "workorders.get_signal_anomalies"
WORK_ORDERS = "workorders.get_work_orders"


def broad_goal(goal: str, scope: Scope) -> str:
    """ "alarm" / "work_order" when the goal ranges over a set of them, else ""."""
    ranged = bool(words.SET_WORDS.search(goal)) or bool(scope.lines)
    if not ranged:
        return ""
    if words.ALARMS.search(goal):
        return "alarm"
    if words.WORK_ORDERS.search(goal) and (words.INVESTIGATE.search(goal) or words.ORDER_STATUS.search(goal)):
        return "work_order"
    return ""


def step_cap(constraints: dict[str, Any]) -> int:
    cap = constraints.get("max_steps")
    return (
        cap if isinstance(cap, int) and not isinstance(cap, bool) and 1 <= cap <= MAX_FANOUT_STEPS else MAX_FANOUT_STEPS
    )


def _note(action: str, reason: str, capability: str = "") -> dict[str, Any]:
    return {"action": action, "capability": capability, "reason": reason}


def find_objects(kind: str, goal: str, scope: Scope, user: AbstractBaseUser) -> tuple[list[dict[str, Any]], list[dict]]:
    """The set's members as `{label, cell_tag, work_order_id, status, alarm_id?}`, and notes."""
    objects: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    status_words = [w.lower().replace(" ", "_").replace("-", "_") for w in words.ORDER_STATUS.findall(goal)]
    wanted = [("analyzed" if s.startswith("analy") else s) for s in status_words] or ["detected"]
    for cell in scope.cells:
        tag, cell_id = str(cell["tag"]), cell["cell_id"]
        orders, error = read(user, WORK_ORDERS, {"cell_id": cell_id, "limit": 100})
        if orders is None:
            notes.append(_note("unresolved", f"could not read the work orders of {tag}: {error}", WORK_ORDERS))
            continue
        rows = orders.get("work_orders") or []
        if kind == "work_order":
            for wo in rows:
                if wo["status"] in wanted:
                    label = f"WO-{wo['id']} on {tag} ({wo['status']}): {wo['title']}"
                    objects.append({"label": label, "cell_tag": tag, "work_order_id": wo["id"], "status": wo["status"]})
            continue
        alarms, error = read(user, ANOMALIES, {"cell_id": cell_id})
        if alarms is None:
            notes.append(_note("unresolved", f"could not read the alarms of {tag}: {error}", ANOMALIES))
            continue
        by_alarm = {wo["triggered_by_alarm_id"]: wo for wo in rows if wo.get("triggered_by_alarm_id")}
        for alarm in alarms.get("anomalies") or []:
            if alarm["state"] not in words.OPEN_ALARM_STATES:
                continue
            what = f"alarm {alarm['alarm_id']} on {tag} ({alarm['key']} {alarm['severity']} {alarm['value']:g})"
            wo = by_alarm.get(alarm["alarm_id"])
            if wo is None:
                notes.append(_note("unresolved", f"{what} has no work order yet; nothing to investigate"))
                continue
            objects.append(
                {
                    "label": f"{what} → WO-{wo['id']}",
                    "cell_tag": tag,
                    "alarm_id": alarm["alarm_id"],
                    "work_order_id": wo["id"],
                    "status": wo["status"],
                }
            )
    if not objects:
        where = ", ".join(scope.lines) or ", ".join(str(c["tag"]) for c in scope.cells) or "the plant"
        what = "open alarm with a work order" if kind == "alarm" else f"{'/'.join(wanted)} work order"
        notes.append(_note("unresolved", f"no {what} on {where}"))
    return objects, notes


def object_steps(obj: dict[str, Any], *, investigate: bool, repair: bool) -> list[dict[str, Any]]:
    """One object's steps, depends_on relative to the first (-1 = none): investigate, then repair."""
    wo, status = obj["work_order_id"], obj["status"]
    steps: list[dict[str, Any]] = []
    if status == "detected" and (investigate or repair):
        steps.append({"capability": INVESTIGATE, "inputs": {"work_order_id": wo}, "depends_on": []})
    if repair and status in ("detected", "analyzed"):
        steps.append({"capability": REPAIR, "inputs": {"work_order_id": wo}, "depends_on": [0] if steps else []})
    return steps


def fan_out_steps(
    objects: list[dict[str, Any]], goal: str, cap: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-object steps (indexes into the returned list) within `cap`, and notes for what is left."""
    investigate = bool(words.INVESTIGATE.search(goal))
    repair = bool(words.REPAIR.search(goal))
    steps: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    left_out: list[str] = []
    planned = 0
    for obj in objects:
        mine = object_steps(obj, investigate=investigate, repair=repair)
        if not mine:
            done = "already has its repair order" if obj["status"] not in ("detected", "analyzed") else "needs nothing"
            notes.append(_note("skipped", f"{obj['label']} is {obj['status']}: {done}"))
            continue
        if len(steps) + len(mine) > cap:
            left_out.append(obj["label"])
            continue
        base, planned = len(steps), planned + 1
        for step in mine:
            steps.append({**step, "depends_on": [base + d for d in step["depends_on"]]})
        plan = " then ".join("investigate" if s["capability"] == INVESTIGATE else "repair order" for s in mine)
        notes.append(_note("planned", f"{obj['label']}: {plan}"))
    if left_out:
        notes.append(
            _note(
                "capped",
                f"step cap {cap} reached: planned {planned} of {planned + len(left_out)}; left out {'; '.join(left_out)}",
            )
        )
    return steps, notes


def cell_reads(scope: Scope, cap: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """With nothing to fan out over, read each scope cell's alarms so the plan still shows the set."""
    steps = [{"capability": ANOMALIES, "inputs": {"cell_id": c["cell_id"]}, "depends_on": []} for c in scope.cells]
    notes = []
    if len(steps) > cap:
        left = ", ".join(str(c["tag"]) for c in scope.cells[cap:])
        notes.append(_note("capped", f"step cap {cap} reached: left out the alarm reads of {left}", ANOMALIES))
    return steps[:cap], notes


def plan_broad(
    kind: str, goal: str, scope: Scope, constraints: dict[str, Any], user: AbstractBaseUser
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The deterministic fan-out: the set's objects → per-object steps (or the cells' alarm reads)."""
    cap = step_cap(constraints)
    objects, notes = find_objects(kind, goal, scope, user)
    steps, more = fan_out_steps(objects, goal, cap)
    if not steps:
        steps, reads = cell_reads(scope, cap)
        more += reads
    return steps, notes + more + unplanned_clauses(goal)


def unplanned_clauses(goal: str) -> list[dict[str, Any]]:
    """A note for each clause of a goal that none of the planner's words cover
    ("… and notify the shift lead": there is no step for it)."""
    covering = (
        words.INVESTIGATE, words.REPAIR, words.ALARMS, words.WORK_ORDERS, words.LINE,
        words.SIGNAL_WORDS, words.READ_WORDS, words.ORDER_STATUS, words.LIMIT_WORDS, words.SET_WORDS,
    )  # fmt: skip
    notes = []
    for clause in words.CLAUSE_SPLIT.split(goal or ""):
        clause = clause.strip(" .!?")
        if len(clause) > 2 and not any(pattern.search(clause) for pattern in covering):
            notes.append(_note("unresolved", f"not planned: “{clause}” — no step of this plan does that"))
    return notes
