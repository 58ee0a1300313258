"""Decision cards: what a person reads before answering a permission ask, in their words.

Who asks (the plan owner, for which goal), what changes (before → after with units: "P-02
vibration alert limit 4.5 → 4.8 mm/s"), why (the step's reason, else the plan's goal), the
evidence (for a limit change: the signal's last 24 h trend and its recent alarms, read through the
registry's read capabilities as the plan owner) and what happens on approve and on reject. Built
once when the ask opens and stored in the interaction's evidence (`card`), so the Plans page, the
plan card, the admin and the coordinator show the same words.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.capabilities import CapabilityContext, Tier, dispatch, registry
from orchestrator.models import Plan, PlanStep

LIMIT_CHANGE = "sentinel.change_signal_limits"
LIMIT_FIELDS = {
    "low_alert": "low alert limit",
    "alert": "alert limit",
    "high_alert": "high alert limit",
    "trip": "trip limit",
    "deadband": "deadband",
    "on_delay_seconds": "on-delay",
}
TREND_HOURS = 24
ALARM_DAYS = 7


def _read(plan: Plan, capability: str, args: dict[str, Any]) -> dict[str, Any] | None:
    result = dispatch(capability, args, ctx=CapabilityContext(user=plan.owner, agent="orchestrator"))
    return None if result.is_error or not isinstance(result.content, dict) else result.content


def _num(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{round(value, 2):g}"
    return "unset" if value is None else str(value)


def _signal(plan: Plan, inputs: dict[str, Any]) -> tuple[dict[str, Any] | None, int | None, str]:
    """The changed signal's current row (from get_current_signals), its cell id and tag."""
    tag = str(inputs.get("cell_tag") or "")
    found = _read(plan, "workorders.find_cells", {"query": tag}) if tag else None
    cell = next((c for c in (found or {}).get("cells", []) if str(c.get("tag", "")).upper() == tag.upper()), None)
    if cell is None:
        return None, None, tag
    current = _read(plan, "workorders.get_current_signals", {"cell_id": cell["cell_id"]}) or {}
    row = next((s for s in current.get("signals", []) if s.get("key") == inputs.get("signal_key")), None)
    return row, cell["cell_id"], tag


def _trend(plan: Plan, signal: dict[str, Any]) -> str:
    trend = _read(
        plan,
        "workorders.get_signal_trends",
        {"signal_def_ids": [signal["signal_def_id"]], "hours": TREND_HOURS, "buckets": 24},
    )
    rows = (trend or {}).get("signals") or []
    if not rows:
        return f"No trend could be read for the last {TREND_HOURS} h."
    row, unit = rows[0], signal.get("unit") or ""
    averages = [b["avg"] for b in row.get("buckets", []) if b.get("avg") is not None]
    if not averages:
        return f"No readings in the last {TREND_HOURS} h."
    first, last = averages[0], averages[-1]
    change = (last - first) / abs(first) if first else 0.0
    shape = "rising" if change > 0.05 else "falling" if change < -0.05 else "steady"
    breach = row.get("breach") or {}
    over = f"; beyond its limit for {_num(breach.get('duration_min'))} min" if breach.get("duration_min") else ""
    return (
        f"Last {TREND_HOURS} h: {shape}, average {_num(first)} → {_num(last)} {unit}, "
        f"peak {_num(row.get('peak'))} {unit}{over}; now {_num(signal.get('value'))} {unit}."
    ).replace("  ", " ")


def _alarms(plan: Plan, cell_id: int, key: str) -> str:
    found = _read(plan, "workorders.get_signal_anomalies", {"cell_id": cell_id})
    if found is None:
        return "The alarm history could not be read."
    since = timezone.now() - timedelta(days=ALARM_DAYS)
    recent = [
        a
        for a in found.get("anomalies", [])
        if a.get("key") == key and (t := parse_datetime(str(a.get("raised_at")))) is not None and t >= since
    ]
    open_now = [a for a in recent if a.get("state") not in ("cleared",)]
    if not recent:
        return f"No alarm on this signal in the last {ALARM_DAYS} days."
    count = f"{len(recent)} alarm{'s' if len(recent) > 1 else ''}"
    return f"{count} on this signal in the last {ALARM_DAYS} days ({len(open_now)} still open)."


def _limit_change(plan: Plan, step: PlanStep) -> dict[str, Any]:
    inputs = step.inputs or {}
    signal, cell_id, tag = _signal(plan, inputs)
    name = (signal or {}).get("name") or str(inputs.get("signal_key") or "signal")
    unit = (signal or {}).get("unit") or ""
    thresholds = (signal or {}).get("thresholds") or {}
    changes = []
    for field, label in LIMIT_FIELDS.items():
        if inputs.get(field) is None:
            continue
        after = inputs[field]
        field_unit = "s" if field == "on_delay_seconds" else unit
        text = f"{tag} {name.lower()} {label} "
        text += f"{_num(thresholds[field])} → {_num(after)}" if field in thresholds else f"→ {_num(after)}"
        changes.append(
            {"what": f"{tag} {name.lower()} {label}", "before": thresholds.get(field), "after": after, "unit": field_unit,
             "text": f"{text} {field_unit}".strip()}
        )  # fmt: skip
    evidence = []
    if signal is not None and cell_id is not None:
        evidence = [_trend(plan, signal), _alarms(plan, cell_id, str(signal["key"]))]
    else:
        evidence = [f"{tag or 'The cell'} {inputs.get('signal_key')}: the signal could not be read."]
    after_text = "; ".join(c["text"] for c in changes) or "the limits"
    return {
        "title": f"Change {after_text}",
        "changes": changes,
        "evidence": evidence,
        "on_approve": f"Sentinel applies {after_text} at once and records it as a limit change (who asked, who "
        f"approved, why); alarms on {tag} are raised against the new limit from then on.",
        "on_reject": "The limits stay as they are; this step is skipped and the plan goes on without it.",
    }


def _generic(plan: Plan, step: PlanStep) -> dict[str, Any]:
    cap = registry.get(step.capability)
    shown = {k: v for k, v in (step.inputs or {}).items() if v is not None}
    what = ", ".join(
        f"{k.replace('_', ' ')} {_num(v) if not isinstance(v, dict | list) else v}" for k, v in shown.items()
    )
    work_order = shown.get("work_order_id")
    evidence = []
    if isinstance(work_order, int):
        found = _read(plan, "workorders.get_work_order", {"work_order_id": work_order})
        if found:
            evidence.append(f"WO-{work_order} on {found.get('cell_tag')} ({found.get('status')}): {found.get('title')}")
    description = cap.description if cap else step.capability
    return {
        "title": f"{description.rstrip('.')}" + (f" — {what}" if what else ""),
        "changes": [],
        "evidence": evidence,
        "on_approve": f"Step {step.order} runs now as {plan.owner.get_username()} ({step.tier}); the plan goes on.",
        "on_reject": f"Step {step.order} is skipped; the plan goes on without it.",
    }


def decision_card(plan: Plan, step: PlanStep) -> dict[str, Any]:
    """The card for a permission ask on `step` (see the module docstring)."""
    body = _limit_change(plan, step) if step.capability == LIMIT_CHANGE else _generic(plan, step)
    gated = Tier.parse(step.tier) == Tier.GATED
    reason = str((step.inputs or {}).get("reason") or "").strip()
    return {
        **body,
        "asked_by": plan.owner.get_username(),
        "asks": f"{plan.owner.get_username()} asks, for plan #{plan.pk}: “{plan.goal}”",
        "why": reason or plan.goal,
        "decider": "an approver other than the plan owner" if gated else "the plan owner",
    }


def card_lines(card: dict[str, Any]) -> list[str]:
    """The card as plain lines (admin, coordinator, notifications)."""
    if not card:
        return []
    lines = [card.get("asks", ""), f"What changes: {card.get('title', '')}", f"Why: {card.get('why', '')}"]
    lines += [f"Evidence: {e}" for e in card.get("evidence", [])]
    lines += [f"If approved: {card.get('on_approve', '')}", f"If rejected: {card.get('on_reject', '')}"]
    return [line for line in lines if line]
