"""Signal features a diagnosis reads (trend, shift, noise, steps, flatlines, bands, coupling).

`cell_features` is deterministic arithmetic over the raw samples; the `signal_features` read
capability returns it to any Investigator, model-backed or offline. The offline stand-in's
rule-based reading of these features lives in `workorders/offline/diagnosis.py`.
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from sentinel.thresholds import evaluate_threshold

# Role of a signal, from what its key says it measures (a physical quantity, not a fault).
_ROLES = (
    ("band_1x", ("1x",)),
    ("band_2x", ("2x",)),
    ("band_hf", ("_hf", "hf_", "bearing_band", "envelope")),
    ("suction", ("suction",)),
    ("discharge", ("discharge_pressure", "outlet_pressure")),
    ("flow", ("flow",)),
    ("current", ("current",)),
    ("speed", ("belt_speed", "speed")),
    ("load", ("load",)),
    ("temperature", ("temp",)),
    ("vibration", ("vib",)),
)
LOCAL = 15  # samples on each side that define "local" for a step


def role_of(key: str) -> str:
    k = key.lower()
    for role, needles in _ROLES:
        if any(n in k for n in needles):
            return role
    return "other"


def _mad(values: list[float]) -> float:
    if not values:
        return 0.0
    centre = statistics.median(values)
    return statistics.median(abs(v - centre) for v in values) * 1.4826


def _steps(values: list[float], floor: float) -> tuple[float, int]:
    """The largest one-sample jump in local noise scales (trend removed), and where it is."""
    diffs = [b - a for a, b in itertools.pairwise(values)]
    best, where = 0.0, -1
    for i, d in enumerate(diffs):
        around = diffs[max(0, i - LOCAL) : i] + diffs[i + 1 : i + 1 + LOCAL]
        if len(around) < 4:
            continue
        centre = statistics.median(around)
        scale = max(_mad([a - centre for a in around]), floor)
        score = abs(d - centre) / scale
        if score > best:
            best, where = score, i + 1
    return best, where


def _runs(values: list[float]) -> tuple[int, int]:
    """(longest run of identical consecutive values, length of the final run)."""
    longest = run = 1
    for a, b in itertools.pairwise(values):
        run = run + 1 if a == b else 1
        longest = max(longest, run)
    return longest, run


def series_features(values: list[float], times: list[float] | None = None) -> dict[str, Any]:
    """Per-signal features over a window of samples (oldest first); `times` in seconds."""
    n = len(values)
    if n < 6:
        return {"n": n, "last": values[-1] if values else None, "too_few_samples": True}
    times = times or [float(i) for i in range(n)]
    base = values[: max(5, int(n * 0.3))]
    late = values[-max(5, int(n * 0.3)) :]
    mean_base = statistics.fmean(base)
    std_base = max(statistics.pstdev(base), abs(mean_base) * 1e-4, 1e-9)
    end = statistics.fmean(values[-3:])
    diffs_base = [b - a for a, b in itertools.pairwise(base)]
    diffs_late = [b - a for a, b in itertools.pairwise(late)]
    noise_base = max(_mad(diffs_base), std_base * 0.05, 1e-9)
    slope = statistics.linear_regression(times, values).slope if len(set(times)) > 1 else 0.0
    step, step_at = _steps(values, noise_base * 0.1)
    longest, tail = _runs(values)
    return {
        "n": n,
        "first": round(values[0], 4),
        "last": round(values[-1], 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "baseline_mean": round(mean_base, 4),
        "baseline_std": round(std_base, 5),
        "end_mean": round(end, 4),
        "shift_sigma": round((end - mean_base) / std_base, 2),
        "relative_change": round((end - mean_base) / max(abs(mean_base), 1e-9), 4),
        "end_to_baseline_ratio": round(end / mean_base, 3) if mean_base > 0 else None,
        "slope_per_hour": round(slope * 3600, 5),
        "noise_ratio": round(max(_mad(diffs_late), 1e-12) / noise_base, 2),
        "recent_noise_ratio": round(max(_mad(diffs_late[-12:]), 1e-12) / noise_base, 2),
        "max_step_sigma": round(min(step, 1e6), 1),
        "max_step_at_sample": step_at,
        "max_step_seconds_before_end": round(times[-1] - times[step_at], 1) if step_at >= 0 else None,
        # A live transmitter never repeats itself exactly; synthetic or hand-typed series do.
        "baseline_has_noise": len(set(base)) > len(base) // 2,
        "longest_flat_run": longest,
        "flat_at_end": tail,
    }


def _correlation(a: list[float], b: list[float]) -> float:
    if len(a) < 6 or len(set(a)) < 2 or len(set(b)) < 2:
        return 0.0
    return statistics.correlation(a, b)


def cell_features(
    series: dict[str, list[tuple[float, float]]], limits: dict[str, dict[str, float | None]] | None = None
) -> dict[str, Any]:
    """Features of every signal ({key: [(time seconds, value), …]}), their roles, which are beyond
    their alarm limits, and the correlations between signals sampled at the same instants."""
    limits = limits or {}
    signals: dict[str, Any] = {}
    for key, points in series.items():
        feats = series_features([v for _, v in points], [t for t, _ in points])
        feats["role"] = role_of(key)
        feats["beyond_limit"] = _beyond(points[-1][1], limits.get(key, {})) if points else None
        signals[key] = feats
    by_time = {key: dict(points) for key, points in series.items()}
    keys = sorted(series)
    correlations = []
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            common = sorted(set(by_time[a]) & set(by_time[b]))
            r = _correlation([by_time[a][t] for t in common], [by_time[b][t] for t in common])
            correlations.append({"a": a, "b": b, "r": round(r, 3)})
    return {"signals": signals, "correlations": correlations}


def _beyond(value: float, limits: dict[str, float | None]) -> str | None:
    """The side ("high" or "low") strictly beyond a limit, or None: Sentinel's classifier."""
    breach = evaluate_threshold(limits, value)
    return str(breach.direction) if breach.breached else None
