"""OFFLINE STAND-IN: the fake engine's Investigator reads `cell_features` output with fixed rules.

Fixed rules over the signal features (workorders/agents/diagnosis_features.py), after DOMAIN.md's
fault signatures. They see only values, timestamps, signal keys and alarm limits — never a
scenario name or label. Real engines never run this; a model reads the same features itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HYDRAULIC = ("flow", "discharge", "current", "suction")
DRIVE = ("speed", "current", "load")
SHIFT = 4.0  # |end − baseline| in baseline standard deviations that counts as a real change
STEP = 20.0  # a one-sample jump this many local noise scales is beyond what a process does
DRIFT = 6.0  # a lone signal this far from its baseline, its peers holding, is an instrument drifting


@dataclass
class Diagnosis:
    """The offline reading: a failure mode slug, the signals that show it, and why."""

    failure_mode: str
    evidence: list[str]
    reasons: list[str] = field(default_factory=list)
    confidence: float = 0.5


class _View:
    def __init__(self, features: dict[str, Any]) -> None:
        self.signals = {k: v for k, v in features.get("signals", {}).items() if not v.get("too_few_samples")}
        self.roles: dict[str, str] = {}
        for key, feats in sorted(self.signals.items()):
            self.roles.setdefault(feats["role"], key)
        self.r = {(c["a"], c["b"]): c["r"] for c in features.get("correlations", [])}

    def key(self, role: str) -> str | None:
        return self.roles.get(role)

    def get(self, role: str, name: str, default: float = 0.0) -> float:
        key = self.key(role)
        value = self.signals[key].get(name) if key else None
        return default if value is None else float(value)

    def shift(self, role: str) -> float:
        return self.get(role, "shift_sigma")

    def moved(self, role: str) -> bool:
        return abs(self.shift(role)) >= SHIFT

    def corr(self, role_a: str, role_b: str) -> float:
        a, b = self.key(role_a), self.key(role_b)
        if not a or not b:
            return 0.0
        return self.r.get((a, b), self.r.get((b, a), 0.0))


def diagnose(features: dict[str, Any]) -> Diagnosis:
    """The offline Investigator's reading of `cell_features` output (DOMAIN.md fault signatures)."""
    v = _View(features)
    if not v.signals:
        return Diagnosis("undetermined", [], ["no samples in the window"], 0.1)
    found = _sensor_failure(v) or _rotating(v) or _hydraulic(v) or _drive(v) or _lone_mover(v)
    if found:
        return found
    beyond = [k for k, f in v.signals.items() if f.get("beyond_limit")]
    return Diagnosis(
        "no_fault",
        beyond,
        [
            f"every signal stays within its baseline noise band; {', '.join(beyond) or 'the alarm'} crossed a limit "
            "inside that band (limit too tight)"
        ],
        0.6,
    )


def _sensor_failure(v: _View) -> Diagnosis | None:
    live = {k: f for k, f in v.signals.items() if f.get("baseline_has_noise")}
    for key, f in sorted(live.items()):
        if f["flat_at_end"] >= 3 or f["longest_flat_run"] >= 6:
            return Diagnosis(
                "sensor_failure",
                [key],
                [f"{key} repeats one value for {f['longest_flat_run']} samples (no measurement noise: a flatline)"],
                0.8,
            )
    for key, f in sorted(live.items(), key=lambda kv: -kv[1]["max_step_sigma"]):
        if f["max_step_sigma"] < STEP:
            break
        at = f["max_step_at_sample"]
        partners = [
            k
            for k, g in v.signals.items()
            if k != key and g["max_step_sigma"] >= 6 and abs(g["max_step_at_sample"] - at) <= 1
        ]
        if not partners:
            return Diagnosis(
                "sensor_failure",
                [key],
                [f"{key} jumps {f['max_step_sigma']:g}× its local noise in one sample while no coupled signal moves"],
                0.75,
            )
    return None


def _rotating(v: _View) -> Diagnosis | None:
    ratio = {b: v.get(b, "end_to_baseline_ratio", 1.0) for b in ("band_1x", "band_2x", "band_hf")}
    vib = v.key("vibration")
    if v.shift("suction") <= -SHIFT and _unsteady(v):
        return None  # hydraulic first: cavitation also raises broadband and bearing-band vibration
    if not any(v.key(b) for b in ratio):
        if v.shift("vibration") >= SHIFT:  # no band signals: a rising overall level is read as wear
            ev = [vib, v.key("temperature") if v.shift("temperature") >= SHIFT else None]
            return Diagnosis("bearing_wear", [k for k in ev if k], ["overall vibration rising (no band signals)"], 0.6)
        return None
    if ratio["band_2x"] >= 2 and ratio["band_2x"] >= 1.5 * ratio["band_1x"]:
        ev = [v.key("band_2x"), vib]
        return Diagnosis(
            "misalignment", [k for k in ev if k], [f"2× running-speed band ×{ratio['band_2x']:g} dominates"], 0.8
        )
    if ratio["band_1x"] >= 2 and ratio["band_1x"] >= 1.5 * ratio["band_2x"]:
        ev = [v.key("band_1x"), vib]
        return Diagnosis(
            "imbalance", [k for k in ev if k], [f"1× running-speed band ×{ratio['band_1x']:g} dominates"], 0.8
        )
    if ratio["band_hf"] >= 2 or (v.shift("vibration") >= SHIFT and v.shift("temperature") >= SHIFT):
        ev = [v.key("band_hf"), v.key("temperature"), vib]
        reasons = [
            f"high-frequency band ×{ratio['band_hf']:g}, overall vibration rising {v.get('vibration', 'slope_per_hour'):g}/h, "
            f"temperature {v.get('temperature', 'end_mean') - v.get('temperature', 'baseline_mean'):+.1f}"
        ]
        return Diagnosis("bearing_wear", [k for k in ev if k], reasons, 0.8)
    return None


def _erratic(v: _View, role: str) -> bool:
    return max(v.get(role, "noise_ratio", 1.0), v.get(role, "recent_noise_ratio", 1.0)) >= 2


def _unsteady(v: _View) -> int:
    """How many of flow, discharge pressure and current fluctuate well beyond their baseline noise."""
    return sum(1 for role in ("flow", "discharge", "current") if v.key(role) and _erratic(v, role))


def _hydraulic(v: _View) -> Diagnosis | None:
    suction = v.shift("suction") if v.key("suction") else 0.0
    if suction <= -2 and _unsteady(v) >= 2:
        ev = [v.key("suction"), v.key("flow")]
        return Diagnosis(
            "cavitation", [k for k in ev if k], ["suction pressure falling, flow and pressure unstable"], 0.75
        )
    if suction <= -SHIFT:
        if _unsteady(v) or v.shift("flow") <= -SHIFT:
            ev = [v.key("suction"), v.key("flow")]
            return Diagnosis(
                "cavitation", [k for k in ev if k], ["suction pressure low with unstable flow/pressure"], 0.8
            )
        return _drift(v, "suction")
    if v.key("discharge") and v.shift("discharge") <= -SHIFT:
        if v.shift("flow") <= -2 or v.corr("discharge", "flow") >= 0.3:
            ev = [v.key("discharge"), v.key("flow")]
            return Diagnosis(
                "seal_leak", [k for k in ev if k], ["discharge pressure sliding down, flow following"], 0.7
            )
        return _drift(v, "discharge")
    return None


def _drive(v: _View) -> Diagnosis | None:
    if not v.key("speed"):
        return None
    speed_odd = v.shift("speed") <= -SHIFT or (v.shift("speed") <= -2 and _erratic(v, "speed"))
    current_odd = v.shift("current") <= -SHIFT or _erratic(v, "current")
    if speed_odd and current_odd and not v.moved("load"):
        ev = [v.key("speed"), v.key("current")]
        return Diagnosis(
            "belt_slip", [k for k in ev if k], ["belt speed and motor current down while the load holds"], 0.75
        )
    return None


def _drift(v: _View, role: str) -> Diagnosis:
    key = v.key(role) or role
    return Diagnosis(
        "sensor_drift",
        [key],
        [f"{key} drifts {v.shift(role):+g}σ while its physically coupled peers hold"],
        0.7,
    )


def _lone_mover(v: _View) -> Diagnosis | None:
    movers = [role for role in sorted({*HYDRAULIC, *DRIVE, "vibration"}) if abs(v.shift(role)) >= DRIFT]
    if not movers:
        return None
    role = max(movers, key=lambda r: abs(v.shift(r)))
    peers = [p for p in (HYDRAULIC if role in HYDRAULIC else DRIVE) if p != role and v.key(p)]
    if any(abs(v.corr(role, p)) >= 0.5 for p in peers):
        return None  # peers move with it: a process change, not an instrument
    return _drift(v, role)


# --- the offline Investigator's use of the features (workorders/offline/investigator.py) ---------


def offline_diagnosis(features_result: Any) -> Diagnosis | None:
    """The OFFLINE stand-in's reading of a `signal_features` tool result (None without one)."""
    if not isinstance(features_result, dict) or not features_result.get("signals"):
        return None
    return diagnose(features_result)


def failures_of_mode(failures: list[dict[str, Any]], diagnosis: Diagnosis | None) -> list[dict[str, Any]]:
    """Past failures a diagnosis can be compared with: those of the same failure mode (all, without one)."""
    if diagnosis is None:
        return failures
    return [f for f in failures if f.get("failure_mode") == diagnosis.failure_mode]


def evidence_pattern(
    current: dict[str, dict[str, float]], features_result: Any, diagnosis: Diagnosis | None
) -> dict[str, dict[str, float]]:
    """The breach pattern plus, per evidence signal, its end value, peak and shift in baseline σ."""
    if diagnosis is None:
        return current
    pattern = {key: dict(values) for key, values in current.items()}
    signals = features_result.get("signals", {})
    for key in diagnosis.evidence:
        f = signals.get(key) or {}
        if f.get("too_few_samples") or "end_mean" not in f:
            continue
        up = (f.get("shift_sigma") or 0) >= 0
        entry = pattern.setdefault(key, {"peak": round(float(f["max"] if up else f["min"]), 2)})  # as current_pattern
        entry["end"] = float(f["end_mean"])
        entry["shift_sigma"] = float(f["shift_sigma"])
    return pattern
