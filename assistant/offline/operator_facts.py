"""OFFLINE STAND-IN (fake engine only): the operator Q&A's sentences about what its read tools
returned — a signal's current value against its limits, a work order, the open work orders, the
standing alarms — and, for a request to act, that it did not act and where the operator does it.
The values are the tools' own; only the framing is in the operator's language (replies.py)."""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse

from assistant.offline.asks import Ask
from assistant.offline.replies import REPLIES, reply_text
from core.humantime import human_time

LIMITS = ("low_alert", "alert", "high_alert", "trip")
DONE = ("completed", "cancelled")  # a work order in these has no action left on its page
LISTED = 5
# The button that does it, as the work order page (static/workorders/work_order_actions.js) and the
# Control Room (control_room_alarms.js) label them.
WORK_ORDER_BUTTONS = {
    "cancel": "Cancel…",
    "delete": "Cancel…",
    "complete": "Complete… (after Start)",
    "assign": "Assign… / Reassign…",
    "start": "Start",
    "resume": "Resume",
    "hold": "Hold…",
}
ALARM_BUTTONS = {
    "acknowledge": "Acknowledge",
    "reset": "Acknowledge",
    "silence": "Acknowledge / Shelve 1 h",
    "shelve": "Shelve 1 h / Shelve until WO #… closes",
    "unshelve": "Unshelve",
    "out_of_service": "Put out of service",
    "return_to_service": "Return to service",
}


def _url(name: str, *args: Any, default: str) -> str:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return default


def _number(value: Any) -> str:
    return f"{round(value, 2):g}" if isinstance(value, int | float) else str(value)


def _signal_matches(row: dict[str, Any], stems: list[str]) -> bool:
    words = f"{row.get('key', '')} {row.get('name', '')}".lower()
    return any(stem in words for stem in stems)


def signal_lines(current: Any, ask: Ask, language: str) -> list[str]:
    """The current value of each signal the question names (else of each abnormal one), with its
    state and limits."""
    if not isinstance(current, dict):
        return []
    rows = [r for r in current.get("signals") or [] if isinstance(r, dict)]
    if ask.signal_stems:
        rows = [r for r in rows if _signal_matches(r, ask.signal_stems)]
    else:
        rows = [r for r in rows if r.get("state") not in (None, "normal", "unknown")]
    tag = current.get("cell_tag") or ""
    return [_value_line(row, tag, language) for row in rows[:LISTED]]


def _value_line(row: dict[str, Any], tag: str, language: str) -> str:
    name = str(row.get("name") or row.get("key") or "")
    if row.get("value") is None:
        return reply_text(language, "value_none").format(tag=tag, name=name)
    state = str(row.get("state") or "")
    if f"state_{state}" in REPLIES["en"]:
        state = reply_text(language, f"state_{state}")
    thresholds = row.get("thresholds")
    if not isinstance(thresholds, dict):
        thresholds = {}
    limits = [f"{reply_text(language, k)} {_number(thresholds[k])}" for k in LIMITS if thresholds.get(k) is not None]
    if row.get("stale"):
        limits.append(reply_text(language, "stale").format(time=human_time(row.get("time"))))
    return (
        reply_text(language, "value_now")
        .format(
            tag=tag,
            name=name,
            value=_number(row["value"]),
            unit=f" {row['unit']}" if row.get("unit") else "",
            details="; ".join(part for part in (state, ", ".join(limits)) if part),
        )
        .replace(" ()", "")
    )


def _status(value: Any) -> str:
    return str(value or "").replace("_", " ")


def work_order_line(result: Any, language: str) -> str:
    return reply_text(language, "wo").format(
        id=result.get("id"),
        tag=result.get("cell_tag"),
        status=_status(result.get("status")),
        priority=result.get("priority"),
        title=result.get("title"),
    )


def open_work_orders_line(result: Any, language: str, cell_id: int | None = None) -> str:
    """The work orders still open (of the cell, when one is named), newest first."""
    rows = result.get("work_orders", []) if isinstance(result, dict) else []
    rows = [r for r in rows if isinstance(r, dict) and r.get("status") not in DONE]
    rows = [r for r in rows if cell_id is None or r.get("cell_id") == cell_id]
    if not rows:
        return reply_text(language, "wo_none_open")
    items = [f"WO-{r.get('id')} {r.get('cell_tag')} {_status(r.get('status'))} ({r.get('title')})" for r in rows]
    return reply_text(language, "wo_open").format(
        items="; ".join(items[:LISTED]) + ("…" if len(items) > LISTED else "")
    )


def standing_alarms_line(result: Any, language: str) -> str:
    """The standing alarms of the site (alarm_performance) or of one cell (get_signal_anomalies)."""
    if not isinstance(result, dict):
        return ""
    if isinstance(result.get("anomalies"), list):
        rows = [r for r in result["anomalies"] if isinstance(r, dict) and r.get("cleared_at") is None]
        items = [
            f"#{r.get('alarm_id')} {r.get('key')} {_status(r.get('state'))} ({_number(r.get('value'))})" for r in rows
        ]
    else:
        standing = result.get("standing")
        if not isinstance(standing, dict):
            standing = {}
        rows = [r for r in standing.get("items") or [] if isinstance(r, dict)]
        items = [
            f"#{r.get('alarm_id')} {r.get('cell_tag')} {r.get('signal_key')} {_status(r.get('state'))}" for r in rows
        ]
        if isinstance(standing.get("count"), int) and standing["count"] > len(items):
            items.append("…")
    if not items:
        return reply_text(language, "alarms_none")
    return reply_text(language, "alarms").format(items="; ".join(items))


def action_notice(ask: Ask, work_order: Any, language: str) -> str:
    """Where the operator does what they asked (the chat does not act)."""
    control_room = _url("control-room", default="/")
    if ask.domain == "work_order" and isinstance(work_order, dict) and isinstance(work_order.get("id"), int):
        if work_order.get("status") in DONE:
            where = reply_text(language, "where_wo_done").format(
                id=work_order["id"], status=_status(work_order["status"])
            )
        elif ask.action in WORK_ORDER_BUTTONS:
            url = _url("work-order", work_order["id"], default=f"/workorders/{work_order['id']}/")
            where = reply_text(language, "where_wo").format(
                id=work_order["id"], url=url, button=WORK_ORDER_BUTTONS[ask.action]
            )
        else:
            where = reply_text(language, "where_other").format(url=control_room)
    elif ask.domain == "work_order" and ask.action in WORK_ORDER_BUTTONS:
        where = reply_text(language, "where_wos").format(button=WORK_ORDER_BUTTONS[ask.action])
    elif ask.domain == "alarm":
        button = ALARM_BUTTONS.get(ask.action or "", "Acknowledge / Shelve 1 h / Put out of service")
        where = reply_text(language, "where_alarm").format(url=control_room, button=button)
    else:
        where = reply_text(language, "where_other").format(url=control_room)
    return where
