"""OFFLINE STAND-IN for the Shift Handover agent (fake engine only; no model involved).

It reads the shift through the same read tools a model would (cells, alarms, work orders, limit
changes, logbook, the previous handover) and assembles the draft deterministically from what they
return: lines are filtered to the shift's period and formatted, nothing is interpreted. The service
labels the result as an offline draft (`ShiftHandover.drafted_offline`). Real engines never run this.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from core.humantime import human_time
from workorders.agents.context import parse_context
from workorders.agents.handover import NAME

MAX_CELLS = 20
OPEN_ALARM_STATES = ("pending", "active_unack", "acknowledged", "shelved", "out_of_service")
ACTIVE_ORDER_STATES = ("detected", "analyzed", "open", "in_progress", "on_hold")


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None


def _within(value: Any, start: datetime, end: datetime) -> bool:
    moment = _time(value)
    return moment is not None and start <= moment < end


def _results(state: FakeState, tool: str) -> list[dict[str, Any]]:
    return [o.content for o in state.outcomes if o.name == tool and not o.is_error and isinstance(o.content, dict)]


@fake_policy(NAME)
def shift_handover(state: FakeState) -> FakeReply:
    ctx = parse_context(state.user_text)
    start, end = _time(ctx.get("period_start")), _time(ctx.get("period_end"))
    if start is None or end is None:
        return FakeReply(text="I cannot draft a handover without the shift's period.")
    if not state.called("find_cells"):
        return FakeReply(
            thinking="Gather the shift's records: cells, work orders, limit changes and the previous handover.",
            tool_calls=[
                ("find_cells", {"limit": 100}),
                ("get_work_orders", {"limit": 100}),
                ("get_limit_changes", {"since": start.isoformat(), "until": end.isoformat(), "limit": 50}),
                ("get_handovers", {"limit": 3}),
            ],
        )
    cells = (state.result("find_cells") or {}).get("cells", [])[:MAX_CELLS]
    if cells and not state.called("get_signal_anomalies"):
        calls: list[tuple[str, dict[str, Any]]] = []
        for cell in cells:
            calls.append(("get_signal_anomalies", {"cell_id": cell["cell_id"]}))
            calls.append(("get_logbook_entries", {"cell_id": cell["cell_id"], "days": 2, "limit": 50}))
        return FakeReply(thinking=f"Read alarms and logbook of {len(cells)} cell(s).", tool_calls=calls)
    return FakeReply(tool_calls=[("submit_handover", _draft(state, cells, start, end))])


def _draft(state: FakeState, cells: list[dict], start: datetime, end: datetime) -> dict[str, Any]:
    tags = {c["cell_id"]: c["tag"] for c in cells}
    alarms = _alarm_lines(state, tags, start, end)
    orders = _order_lines(state, start, end)
    changes = [
        f"{c['cell_tag']} {c['signal_key']}: {c['change']} — {c['reason']} (by {c['requested_by']})"
        for c in (state.result("get_limit_changes") or {}).get("changes", [])
    ]
    logbook, safety = _logbook_lines(state, tags, start, end)
    watch = list(alarms["watch"])
    watch += [line for line in orders["active"] if " in_progress " in line or " on_hold " in line]
    watch += [f"Limit change in force: {line}" for line in changes]
    watch += _carried_over(state, start)
    open_count, active_count = len(alarms["open"]), len(orders["active"])
    plant_state = (
        f"{len(cells)} cell(s) watched; {open_count} alarm(s) still open, {len(alarms['raised'])} raised this shift; "
        f"{active_count} work order(s) active; {len(changes)} limit change(s) this shift."
    )
    return {
        "plant_state": plant_state,
        "alarms": (alarms["open"] + alarms["shift"])[:60],
        "work_orders": (orders["shift"] + orders["active"])[:60],
        "limit_changes": changes[:60],
        "logbook": logbook[:60],
        "safety": safety[:60],
        "watch_next_shift": list(dict.fromkeys(watch))[:60],
    }


def _alarm_lines(state: FakeState, tags: dict, start: datetime, end: datetime) -> dict[str, list[str]]:
    """Open alarms and those closed that the shift raised, as lines; `watch`: the open ones still
    unacknowledged or out of view; `raised`: every alarm raised in the shift, whatever its state now."""
    lines: dict[str, list[str]] = {"open": [], "shift": [], "watch": [], "raised": []}
    for result in _results(state, "get_signal_anomalies"):
        tag = tags.get(result.get("cell_id"), f"cell {result.get('cell_id')}")
        for a in result.get("anomalies", []):
            state_name = str(a.get("state", ""))
            label = "unacknowledged" if state_name == "active_unack" else state_name.replace("_", " ")
            line = (
                f"#{a['alarm_id']} {tag} {a['key']} {a['severity']} {a['direction']} "
                f"(peak {a['peak_value']}, limit {a['threshold']}) — {label}{_why_out_of_view(a.get('suppression'))}"
            )
            raised = _within(a.get("raised_at"), start, end)
            if raised:
                lines["raised"].append(line)
            if state_name in OPEN_ALARM_STATES:
                lines["open"].append(line)
                if state_name in ("active_unack", "shelved", "out_of_service"):
                    lines["watch"].append(line)
            elif raised:
                lines["shift"].append(line)
    return lines


def _why_out_of_view(suppression: Any) -> str:
    """' by olga until 2024-05-02 14:30 UTC: <reason>' for a shelved or out-of-service alarm."""
    if not isinstance(suppression, dict):
        return ""
    by = f" by {suppression['by']}" if suppression.get("by") else ""
    until = _local(suppression.get("until"))
    if suppression.get("state") != "shelved":
        until_text = " until returned to service"
    elif suppression.get("until_work_order_closes"):
        until_text = (
            f" until its work order closes (at the latest {until})" if until else " until its work order closes"
        )
    else:
        until_text = f" until {until}" if until else ""
    reason = suppression.get("reason") or "no reason recorded"
    return f"{by}{until_text}: {reason}"


def _local(value: Any) -> str | None:
    """A tool's ISO time as the report's reader reads one: 'YYYY-MM-DD HH:MM <zone>' in the plant's
    zone (core.humantime); None when there is none."""
    moment = _time(value)
    return human_time(moment) if moment else None


def _order_lines(state: FakeState, start: datetime, end: datetime) -> dict[str, list[str]]:
    active: list[str] = []
    shift: list[str] = []
    for wo in (state.result("get_work_orders") or {}).get("work_orders", []):
        line = f"WO-{wo['id']} {wo['cell_tag']} {wo['status']} {wo['priority']}: {wo['title'] or '(untitled)'}"
        if wo["status"] in ACTIVE_ORDER_STATES:
            active.append(line)
        elif _within(wo.get("updated_at"), start, end):
            shift.append(line)  # closed during the shift
    return {"active": active, "shift": shift}


def _logbook_lines(state: FakeState, tags: dict, start: datetime, end: datetime) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    safety: list[str] = []
    for result in _results(state, "get_logbook_entries"):
        tag = tags.get(result.get("cell_id"), f"cell {result.get('cell_id')}")
        for e in result.get("entries", []):
            if not _within(e.get("time"), start, end):
                continue
            text = " ".join(str(e.get("text", "")).split())[:300]
            line = f"{tag} ({e.get('author')}, {e.get('category') or 'note'}): {text}"
            (safety if e.get("category") == "safety" else lines).append(line)
    return lines, safety


def _carried_over(state: FakeState, start: datetime) -> list[str]:
    """What the previous shift's signed report asked to watch."""
    for h in (state.result("get_handovers") or {}).get("handovers", []):
        ended = _time(h.get("period_end"))
        if ended is not None and ended <= start:
            return [f"From the previous handover: {line}" for line in h.get("watch_next_shift", [])[:10]]
    return []
