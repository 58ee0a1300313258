"""The machine-readable context line every maintenance agent's task message carries, and the
values a published prompt's `{{variables}}` are filled with (core.agents.prompts.system_prompt_for)."""

import json
import re
from typing import Any

from sentinel.models import Alarm
from workorders.choices import CONFIRMED_VERIFICATIONS
from workorders.models import FailureHistory
from workorders.services.lifecycle import alarm_ids_of

_CONTEXT = re.compile(r"^Context: (\{.*\})\s*$", re.MULTILINE)


def context_line(data: dict[str, Any]) -> str:
    return "Context: " + json.dumps(data, sort_keys=True, default=str)


def parse_context(text: str) -> dict[str, Any]:
    """The JSON of the last `Context: {...}` line in a message, or {}."""
    found = _CONTEXT.findall(text or "")
    if not found:
        return {}
    try:
        value = json.loads(found[-1])
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _failure_line(f: Any) -> str:
    if f.verification == "corrected":
        status = (
            f"confirmed failure, corrected by a technician {f.confirmed_at or f.resolved_time:%Y-%m-%d}: "
            f"the RCA had proposed {f.failure_mode}"
        )
    elif f.is_confirmed:
        when = f.confirmed_at or f.resolved_time
        status = f"confirmed failure{f', resolved {when:%Y-%m-%d}' if when else ''}"
    else:
        status = "unconfirmed RCA proposal"
    return (
        f"- #{f.pk} {f.failure_time:%Y-%m-%d} {f.actual_failure_mode} ({status}): "
        f"{f.actual_root_cause[:200]} patterns={f.signal_patterns}"
    )


def recent_failures_text(cell_id: int, limit: int = 5) -> str:
    """The cell's last failures (the Investigator's prompt block): confirmed ones first — a
    technician confirmed or corrected the cause, the actual cause shown — then, apart and labelled,
    the latest RCAs nobody has confirmed yet (proposals, never evidence)."""
    rows = FailureHistory.objects.filter(cell_id=cell_id).order_by("-failure_time")
    confirmed = list(rows.filter(verification__in=CONFIRMED_VERIFICATIONS)[:limit])
    proposed = list(rows.exclude(verification__in=CONFIRMED_VERIFICATIONS)[: max(limit - len(confirmed), 0)])
    lines = ["Confirmed failures (a technician confirmed or corrected the cause):"]
    lines += [_failure_line(f) for f in confirmed] or ["- none recorded"]
    if proposed:
        lines.append("Unconfirmed RCA proposals (earlier diagnoses nobody verified; not confirmed failures):")
        lines += [_failure_line(f) for f in proposed]
    return "\n".join(lines)


def linked_alarms(work_order: Any) -> list[dict[str, Any]]:
    """Every alarm linked to the order — the one that opened it, repeats of its signal and the
    cell's other alarms of the same episode — oldest first, as the investigation should see them."""
    ids = alarm_ids_of(work_order)
    if not ids:
        return []
    alarms = Alarm.objects.filter(pk__in=sorted(ids)).select_related("signal").order_by("raised_at", "pk")
    return [
        {
            "alarm_id": a.pk,
            "signal_key": a.signal.key,
            "signal_name": a.signal.display_name or a.signal.key,
            "unit": a.signal.unit,
            "severity": a.severity,
            "direction": a.direction,
            "value": a.value,
            "threshold": a.threshold_value,
            "peak": a.peak_value,
            "raised_at": a.raised_at.isoformat(),
            "state": a.state,
        }
        for a in alarms
    ]


def linked_alarms_text(alarms: list[dict[str, Any]]) -> str:
    """One line per linked alarm (the agents' prompt block)."""
    lines = [
        f"- Alarm #{a['alarm_id']}: {a['signal_key']} {a['direction']} {a['severity']}, value {a['value']:g} "
        f"(limit {a['threshold']:g}, peak {a['peak']:g}) since {a['raised_at']} [{a['state']}]"
        for a in alarms
    ]
    return "\n".join(lines) or "- none linked"


def cell_variables(cell: Any) -> dict[str, Any]:
    """Prompt variables of a cell (sentinel.Cell, or None)."""
    if cell is None:
        return {}
    return {
        "cell_id": cell.pk,
        "cell_tag": cell.tag,
        "cell_name": cell.name,
        "equipment_type": cell.equipment_type,
        "focus": cell.tag,
    }


def work_order_variables(work_order: Any) -> dict[str, Any]:
    """Prompt variables of a work order: its cell, the triggering signal (`focus`: what to check
    first), its title, priority, failure mode and the cell's recent failures. Names a published
    prompt may declare; anything else stays visible as written."""
    signal = work_order.triggered_by_signal_def
    values = {
        **cell_variables(work_order.cell),
        "work_order_id": work_order.pk,
        "work_order_title": work_order.title,
        "title": work_order.title,
        "priority": work_order.priority,
        "failure_mode": (work_order.rca_details or {}).get("failure_mode") or None,
        "rca_summary": work_order.rca_summary or None,
        "recent_failures": recent_failures_text(work_order.cell_id),
        "alarms": linked_alarms_text(linked_alarms(work_order)),
    }
    if signal is not None:
        name = signal.display_name or signal.key
        values |= {
            "signal_key": signal.key,
            "signal_name": name,
            "focus": f"{name} ({signal.key}) on {work_order.cell.tag}",
        }
    return values
