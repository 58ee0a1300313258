"""Limit-change goals → a read of the cell's signals, then the gated `sentinel.change_signal_limits`.

"Raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer": the tag is
already a `cell_id` (find_cells), the measured quantity (vibration, temperature, pressure, flow,
current) is matched to a signal key read through `workorders.get_current_signals` as the plan
owner, the limit word picks the field (high alert, low alert, trip, deadband, on-delay, else
alert), the number after "to" is the new value and the words after "because" are the reason.
What cannot be resolved drops the change step with a recorded reason; nothing is guessed.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from orchestrator.planning.cells import read

CHANGE = "sentinel.change_signal_limits"
READ_SIGNALS = "workorders.get_current_signals"

_VERB = re.compile(r"\b(raise|lower|set|change|increase|decrease|reduce|adjust|move|tune|widen|tighten)\b", re.I)
_LIMIT = re.compile(r"\b(limits?|thresholds?|set ?points?|trip|dead[- ]?band|on[- ]delay)\b", re.I)
_FIELD = re.compile(r"\b(high[- ]alert|low[- ]alert|trip|dead[- ]?band|on[- ]delay|alert|alarm)\b", re.I)
_TARGET = re.compile(r"\bto\s+(-?\d+(?:\.\d+)?)(?!\.?\d)", re.I)
_BECAUSE = re.compile(r"\bbecause\b[\s,:]*", re.I)
# goal word → the fragment of a signal key it names
_MEASURES = {
    "vibration": "vibration",
    "temperature": "temp",
    "temp": "temp",
    "pressure": "pressure",
    "flow": "flow",
    "current": "current",
}
_MEASURE = re.compile(rf"\b({'|'.join(_MEASURES)})\b", re.I)


def _field(word: str) -> str:
    word = re.sub(r"[- ]", "", word.lower())
    return {
        "highalert": "high_alert",
        "lowalert": "low_alert",
        "trip": "trip",
        "deadband": "deadband",
        "ondelay": "on_delay_seconds",
    }.get(word, "alert")


def is_limit_change(goal: str) -> bool:
    """A goal that asks to move an alarm limit: before "because", a change verb and a limit word
    ("limit", "trip", "deadband"…), or an alert word with a new value ("high alert to 85")."""
    instruction = _BECAUSE.split(goal or "", maxsplit=1)[0]
    if not _VERB.search(instruction):
        return False
    return bool(_LIMIT.search(instruction) or (_FIELD.search(instruction) and _TARGET.search(instruction)))


def _signal(instruction: str, signals: list[dict[str, Any]], tag: str) -> tuple[dict[str, Any] | None, str]:
    measures = list(dict.fromkeys(_MEASURES[m.lower()] for m in _MEASURE.findall(instruction)))
    if len(measures) != 1:
        named = "several signals" if measures else "no signal"
        return None, f"the goal names {named}; say one of vibration, temperature, pressure, flow or current"
    candidates = [s for s in signals if measures[0] in str(s.get("key", ""))]
    if len(candidates) > 1:  # suction vs discharge pressure: a word only one key has picks it
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", instruction)}
        tokens = [set(str(s["key"]).split("_")) for s in candidates]
        shared = set.intersection(*tokens)
        narrowed = [s for s, t in zip(candidates, tokens, strict=True) if words & (t - shared)]
        candidates = narrowed or candidates
    keys = ", ".join(str(s.get("key")) for s in (candidates or signals))
    if not candidates:
        return None, f"{tag} has no {measures[0]} signal (it has {keys or 'none'})"
    if len(candidates) > 1:
        return None, f"{tag} has several {measures[0]} signals ({keys}); name one"
    return candidates[0], ""


def limit_change_inputs(goal: str, cell_id: int, user: AbstractBaseUser) -> tuple[dict[str, Any] | None, str]:
    """(the change step's inputs, what was resolved) or (None, why the step cannot be planned)."""
    instruction, *because = _BECAUSE.split(goal, maxsplit=1)
    fields = list(dict.fromkeys(_field(w) for w in _FIELD.findall(instruction)))
    if len(fields) > 1:
        return None, f"the goal names several limits ({', '.join(fields)}); plan one change per goal"
    field = fields[0] if fields else "alert"
    target = _TARGET.search(instruction)
    if target is None:
        return None, "no new value: say which value the limit goes to (e.g. 'to 4.8')"
    value: float | int = float(target.group(1))
    if field == "on_delay_seconds":
        if not value.is_integer():
            return None, f"on-delay must be whole seconds, not {target.group(1)}"
        value = int(value)
    current, error = read(user, READ_SIGNALS, {"cell_id": cell_id})
    if current is None:
        return None, f"could not read the cell's signals: {error}"
    tag = str(current.get("cell_tag") or f"cell {cell_id}")
    signal, why = _signal(instruction, current.get("signals") or [], tag)
    if signal is None:
        return None, why
    reason = "".join(because).strip() or goal.strip()
    reason = reason[:1].upper() + reason[1:]
    thresholds = signal.get("thresholds") or {}  # the four limits; deadband and on-delay are not read back
    was = "" if field not in thresholds else ("unset → " if thresholds[field] is None else f"{thresholds[field]:g} → ")
    resolved = f"{tag} {signal['key']} {field}: {was}{value:g}"
    inputs = {"cell_tag": tag, "signal_key": signal["key"], field: value, "reason": reason}
    return inputs, resolved


def add_limit_change(
    goal: str, steps: list[dict[str, Any]], refs: dict[str, Any], user: AbstractBaseUser
) -> list[dict[str, Any]]:
    """Append the read (unless planned) and the gated change step to `steps`; return the notes."""
    if "cell_id" not in refs:
        why = "no equipment tag in the goal resolved to a cell"
        return [{"action": "dropped", "capability": CHANGE, "reason": why}]
    cell_id = refs["cell_id"]
    inputs, why = limit_change_inputs(goal, cell_id, user)
    if inputs is None:
        return [{"action": "dropped", "capability": CHANGE, "reason": why}]
    reading = next(
        (i for i, s in enumerate(steps) if s["capability"] == READ_SIGNALS and s["inputs"].get("cell_id") == cell_id),
        None,
    )
    if reading is None:
        steps.append({"capability": READ_SIGNALS, "inputs": {"cell_id": cell_id}, "depends_on": []})
        reading = len(steps) - 1
    steps.append({"capability": CHANGE, "inputs": inputs, "depends_on": [reading]})
    return [{"action": "resolved", "capability": CHANGE, "reason": f"{why} (gated: an approver releases it)"}]
