"""Signal-pattern extraction and matching against past failures (used by the fake Investigator,
and cheap enough to reuse anywhere a deterministic first guess helps)."""

from __future__ import annotations

from typing import Any


def current_pattern(trends: dict[str, Any], trigger_key: str | None = None) -> dict[str, dict[str, float]]:
    """{signal key: {peak, duration_min}} for every signal beyond its limit in the trend window."""
    pattern: dict[str, dict[str, float]] = {}
    for signal in trends.get("signals", []):
        breach = signal.get("breach")
        if breach and signal.get("peak") is not None:
            peak = signal["peak"] if breach.get("direction") == "high" else signal.get("low")
            pattern[signal["key"]] = {"peak": round(float(peak), 2), "duration_min": float(breach["duration_min"])}
    if not pattern and trigger_key:
        for signal in trends.get("signals", []):
            if signal["key"] == trigger_key and signal.get("peak") is not None:
                pattern[trigger_key] = {"peak": round(float(signal["peak"]), 2), "duration_min": 0.0}
    return pattern


def _closeness(a: float, b: float) -> float:
    scale = max(abs(a), abs(b), 1e-9)
    return max(0.0, 1.0 - abs(a - b) / scale)


def similarity(current: dict[str, dict[str, float]], past: dict[str, dict[str, float]]) -> float:
    """0..1: per shared signal, peak closeness (80 %) and duration closeness (20 %), × coverage."""
    shared = [k for k in current if k in past and isinstance(past[k], dict)]
    if not shared:
        return 0.0
    scores = []
    for key in shared:
        cur, old = current[key], past[key]
        score = _closeness(float(cur.get("peak", 0)), float(old.get("peak", 0)))
        if cur.get("duration_min") and old.get("duration_min"):
            score = 0.8 * score + 0.2 * _closeness(float(cur["duration_min"]), float(old["duration_min"]))
        scores.append(score)
    coverage = len(shared) / len(set(current) | set(past))
    return round(sum(scores) / len(scores) * coverage**0.5, 3)


def is_confirmed_failure(failure: dict[str, Any]) -> bool:
    """A row a technician confirmed or corrected (selectors.failure_as_dict's `confirmed`). Rows
    without the flag are judged by `verification`; an unconfirmed RCA proposal never counts."""
    if "confirmed" in failure:
        return bool(failure["confirmed"])
    return failure.get("verification") in ("confirmed", "corrected")


def closest_failure(
    current: dict[str, dict[str, float]], failures: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, float]:
    """The confirmed past failure most similar to the current pattern (matching an unconfirmed
    proposal would only echo an earlier guess), with its similarity."""
    best, best_score = None, 0.0
    for failure in filter(is_confirmed_failure, failures):
        score = similarity(current, failure.get("signal_patterns") or {})
        if score > best_score:
            best, best_score = failure, score
    return best, best_score
