"""A tuning suggestion for a bad actor (ISA-18.2 rationalization): deadband, on-delay or limit,
with the evidence, worded as a goal the plans API turns into the gated `sentinel.change_signal_limits`.

Rules, first that fits:
- chattering → deadband about 3 σ of the value's noise (at least double the current one);
- mostly fleeting (cleared within seconds) → an on-delay longer than the longest fleeting alarm;
- standing (> 1 h) with its worst value close to the limit (within 5 %) → move the limit past it,
  never past the next limit up (a trip limit is not moved: that is a design question).
A suggestion whose limit set `sentinel.thresholds.limits_problem` would refuse is not offered.

The goal follows the heuristic planner's wording (`orchestrator/planning/limits.py`): a verb, the
equipment tag, one measured quantity (vibration, temperature, pressure, flow, current) with the
signal key's other words, the limit word, "to <value>", then "because <evidence>". A signal whose
key names none of those quantities gets the suggestion without a plan (`plan_unavailable`).
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from sentinel.thresholds import Thresholds, limits_problem

FLEETING_SECONDS = 5
STANDING_AFTER = timedelta(hours=1)
NEAR_LIMIT = 0.05
ON_DELAY_STEPS = (5, 10, 15, 30, 60, 120, 300)
# key token → the word the planner reads (it matches the signal key by fragment: "temp", "flow"…)
_MEASURE_WORDS = {
    "vibration": "vibration",
    "temp": "temperature",
    "temperature": "temperature",
    "pressure": "pressure",
    "flow": "flow",
    "current": "current",
}
# words the planner would read as something else in the instruction
_RESERVED = {"alert", "alarm", "trip", "high", "low", "limit", "limits", "deadband", "dead", "band", "on", "delay"}
_RESERVED |= {"to", "because", "threshold", "setpoint", "set", "point"}
_NEXT_UP = {"alert": ("high_alert", "trip"), "high_alert": ("trip",)}
_FIELD_WORDS = {"alert": "alert", "high_alert": "high alert", "low_alert": "low alert", "trip": "trip"}


def nice_ceil(value: float) -> float:
    """Round up to two significant figures (0.183 → 0.19, 4.62 → 4.7)."""
    if value <= 0:
        return 0.0
    step = 10 ** (math.floor(math.log10(value)) - 1)
    return round(math.ceil(value / step - 1e-9) * step, 10)


def nice_floor(value: float) -> float:
    return -nice_ceil(-value) if value < 0 else _floor_positive(value)


def _floor_positive(value: float) -> float:
    if value == 0:
        return 0.0
    step = 10 ** (math.floor(math.log10(value)) - 1)
    return round(math.floor(value / step + 1e-9) * step, 10)


def number(value: float) -> str:
    """A plain decimal the planner's "to <number>" reads (never 1e-05)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def measure_phrase(key: str) -> str | None:
    """ "discharge_pressure_bar" → "discharge pressure"; None when the key names no quantity the
    planner knows (or several)."""
    tokens = [t for t in key.lower().split("_") if t]
    found = [i for i, t in enumerate(tokens) if t in _MEASURE_WORDS]
    if len(found) != 1:
        return None
    at = found[0]
    qualifiers = [t for t in tokens[:at] if t.isalpha() and t not in _RESERVED and t not in _MEASURE_WORDS]
    return " ".join([*qualifiers, _MEASURE_WORDS[tokens[at]]])


def _limits(signal: dict[str, Any]) -> dict[str, Any]:
    return {name: signal[f"signal__{name}"] for name in ("low_alert", "alert", "high_alert", "trip", "deadband")}


def _refused(signal: dict[str, Any], field: str, value: float) -> str | None:
    limits = {**_limits(signal), field: value}
    problem = limits_problem(Thresholds.of(limits), changed={field})
    return problem[1] if problem else None


def _plan(signal: dict[str, Any], field: str, value: float, reason: str) -> tuple[dict[str, Any] | None, str]:
    phrase = measure_phrase(signal["signal__key"])
    if phrase is None:
        why = (
            f"the plan wording needs the signal key to name one of vibration, temperature, pressure, flow or "
            f"current ({signal['signal__key']} does not); change it through Plans with the signal id"
        )
        return None, why
    tag = signal["signal__cell__tag"]
    if field == "deadband":
        instruction = f"Set the {tag} {phrase} deadband to {number(value)}"
    elif field == "on_delay_seconds":
        instruction = f"Set the {tag} {phrase} on-delay to {int(value)}"
    else:
        verb = "Raise" if value > (signal[f"signal__{field}"] or 0) else "Lower"
        instruction = f"{verb} the {tag} {phrase} {_FIELD_WORDS[field]} limit to {number(value)}"
    goal = f"{instruction} because {reason}"
    return {"goal": goal[:2000], "context_refs": [f"cell:{signal['signal__cell_id']}"]}, ""


def _suggest(
    signal: dict[str, Any], kind: str, field: str, value: float, evidence: list[str], title: str
) -> dict[str, Any] | None:
    if field != "on_delay_seconds":
        refused = _refused(signal, field, value)
        if refused:
            return None
    reason = "; ".join(evidence)
    if len(reason) > 480:  # the change's reason is at most 500 characters
        reason = reason[:477] + "…"
    plan, why = _plan(signal, field, value, reason)
    return {
        "kind": kind,
        "field": field,
        "current": signal[f"signal__{field}"],
        "value": value,
        "title": title,
        "evidence": evidence,
        "plan": plan,
        "plan_unavailable": why,
    }


def _deadband(facts: dict[str, Any]) -> dict[str, Any] | None:
    signal, chatter = facts["signal"], facts["chattering"]
    current = float(signal["signal__deadband"] or 0.0)
    noise = facts["noise"]
    unit = signal["signal__unit"]
    wanted = 3 * noise if noise else 0.0
    value = nice_ceil(max(wanted, current * 2 if current > 0 else 0.0, abs(signal["threshold_value"] or 0) * 0.005))
    if value <= current:
        return None
    evidence = [
        f"{chatter['alarms']} alarms in the window, up to {chatter['max_in_60s']} within 60 s"
        + (" (flagged chattering)" if chatter["flagged"] else ""),
    ]
    if noise:
        evidence.append(f"value noise σ = {noise:.3g} {unit} against a deadband of {current:g} {unit}")
        evidence.append(
            f"a deadband of {value:g} {unit} (at least 3 σ and double the current one) keeps noise from "
            "re-crossing the limit"
        )
    title = f"Widen the deadband {current:g} → {value:g} {unit}".strip()
    return _suggest(signal, "deadband", "deadband", value, evidence, title)


def _on_delay(facts: dict[str, Any]) -> dict[str, Any] | None:
    signal, alarms = facts["signal"], facts["alarms"]
    durations = [
        (a["cleared_at"] - a["raised_at"]).total_seconds()
        for a in alarms
        if a["cleared_at"] is not None and (a["cleared_at"] - a["raised_at"]).total_seconds() <= FLEETING_SECONDS
    ]
    if len(durations) < 2 or len(durations) * 2 < len(alarms):
        return None
    current = int(signal["signal__on_delay_seconds"] or 0)
    longest = max(durations)
    value = next((s for s in ON_DELAY_STEPS if s >= max(2 * longest, current + 1)), None)
    if value is None:
        return None
    evidence = [
        f"{len(durations)} of {len(alarms)} alarms cleared within {FLEETING_SECONDS} s (longest {longest:g} s)",
        f"on-delay now {current} s; {value} s filters those spikes and delays a real alarm by only {value} s",
    ]
    return _suggest(signal, "on_delay", "on_delay_seconds", value, evidence, f"Add an on-delay {current} → {value} s")


def _limit(facts: dict[str, Any]) -> dict[str, Any] | None:
    signal, now = facts["signal"], facts["now"]
    candidates = [a for a in facts["alarms"] if a["threshold_field"] in ("alert", "high_alert", "low_alert")]
    if facts["open"] is not None and facts["open"]["threshold_field"] in ("alert", "high_alert", "low_alert"):
        candidates.append(facts["open"])
    standing = [a for a in candidates if (a["cleared_at"] or now) - a["raised_at"] >= STANDING_AFTER]
    if not standing:
        return None
    alarm = max(standing, key=lambda a: (a["cleared_at"] or now) - a["raised_at"])
    field, limit, peak = alarm["threshold_field"], alarm["threshold_value"], alarm["peak_value"]
    beyond = abs(peak - limit) / max(abs(limit), 1e-9)
    if beyond > NEAR_LIMIT:
        return None
    margin = max(float(signal["signal__deadband"] or 0.0), 3 * (facts["noise"] or 0.0), abs(limit) * 0.01)
    value = nice_floor(peak - margin) if field == "low_alert" else nice_ceil(peak + margin)
    for above in _NEXT_UP.get(field, ()):
        if signal[f"signal__{above}"] is not None and value >= signal[f"signal__{above}"]:
            return None  # would reach the next limit: a design question, not a tuning one
    hours = ((alarm["cleared_at"] or now) - alarm["raised_at"]).total_seconds() / 3600
    unit = signal["signal__unit"]
    evidence = [
        f"standing {hours:.1f} h with its worst value {peak:g} {unit} only {100 * beyond:.1f} % past the "
        f"{_FIELD_WORDS[field]} limit {limit:g} {unit}: the process runs there",
        f"moving the limit to {value:g} {unit} (worst value + {margin:.3g}) keeps the alarm for a real excursion",
    ]
    title = f"Move the {_FIELD_WORDS[field]} limit {limit:g} → {value:g} {unit}".strip()
    return _suggest(signal, "limit", field, value, evidence, title)


def tuning_suggestion(facts: dict[str, Any]) -> dict[str, Any] | None:
    """`facts`: signal (an alarm row with the signal's limits), alarms (its rows in the window),
    chattering (its chatter item or None), open (its open alarm row or None), noise (σ or None), now."""
    if facts.get("chattering"):
        found = _deadband(facts)
        if found:
            return found
    return _on_delay(facts) or _limit(facts)
