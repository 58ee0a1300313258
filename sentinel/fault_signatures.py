"""The fault signatures behind `sentinel.fault_scenarios.generate`: how each fault bends a cell's
signal means and noise over a case's window (DOMAIN.md "Fault signatures"), and the mean-reverting
noise laid over them. A fault is a function of a `FaultDraft` (the case being built, its random
draws seeded by the case); `FAULTS` names them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sentinel.fault_equipment import (
    CONVEYOR,
    DRIVE,
    HYDRAULIC,
    PUMP,
    RANGE_TOP,
    TEMPERATURE,
    EvalSignal,
)


@dataclass
class FaultDraft:
    rng: random.Random
    equipment: str
    n: int
    mean: dict[str, list[float]]
    noise_mult: dict[str, list[float]]
    signals: dict[str, EvalSignal]
    evidence: tuple[str, ...] = ()
    variant: str = ""
    prefix: int = 0
    post: list[Callable[[dict[str, list[float]]], None]] = field(default_factory=list)

    def ramp(self, onset: float, duration: float | None = None, shape: float = 1.0) -> list[float]:
        """0 before `onset` (fraction of the window), rising to 1 over `duration` (default: to the end)."""
        start = int(onset * self.n)
        length = max(1.0, (duration if duration is not None else 1.0 - onset) * self.n)
        return [min(1.0, max(0.0, (i - start) / length)) ** shape for i in range(self.n)]

    def shift(self, key: str, progress: list[float], delta: float) -> None:
        self.mean[key] = [m + delta * p for m, p in zip(self.mean[key], progress, strict=True)]

    def scale(self, key: str, progress: list[float], factor: float) -> None:
        self.mean[key] = [m * (1 + (factor - 1) * p) for m, p in zip(self.mean[key], progress, strict=True)]

    def noisier(self, key: str, progress: list[float], factor: float) -> None:
        self.noise_mult[key] = [m * (1 + (factor - 1) * p) for m, p in zip(self.noise_mult[key], progress, strict=True)]

    def band_for_overall(self, band: str, overall: float) -> float:
        """The band level that brings the overall vibration to `overall` (RMS sum of the bands)."""
        levels = {k: self.signals[k].nominal for k in ("vib_1x_mm_s", "vib_2x_mm_s")}
        levels["broadband"] = broadband_nominal(self.signals)
        others = sum(v**2 for k, v in levels.items() if k != band)
        return math.sqrt(max(overall**2 - others, 0.01))


def broadband_nominal(signals: dict[str, EvalSignal]) -> float:
    """The rest of the overall vibration (not 1×/2×), at nominal."""
    rest = (
        signals["vibration_mm_s"].nominal ** 2
        - signals["vib_1x_mm_s"].nominal ** 2
        - signals["vib_2x_mm_s"].nominal ** 2
    )
    return math.sqrt(max(rest, 0.01))


# --- the faults ---------------------------------------------------------------------------------


def _bearing_wear(d: FaultDraft) -> None:
    p = d.ramp(d.rng.uniform(0.15, 0.4), shape=d.rng.uniform(1.3, 1.8))
    d.scale("vib_hf_g", p, d.rng.uniform(5.0, 8.0))
    d.scale("broadband", p, d.band_for_overall("broadband", d.rng.uniform(4.9, 6.0)) / broadband_nominal(d.signals))
    d.scale("vib_1x_mm_s", p, 1.1)
    d.shift(TEMPERATURE[d.equipment], p, d.rng.uniform(6.0, 14.0))
    d.shift("motor_current_a", p, d.rng.uniform(0.02, 0.04) * d.signals["motor_current_a"].nominal)
    d.evidence = ("vib_hf_g", TEMPERATURE[d.equipment], "vibration_mm_s")
    d.prefix = int(d.n * 0.15)


def _cavitation(d: FaultDraft) -> None:
    p = d.ramp(d.rng.uniform(0.3, 0.5))
    d.shift("suction_pressure_bar", p, d.rng.uniform(0.55, 0.75) - 1.6)
    d.noisier("suction_pressure_bar", p, 4)
    d.scale("flow_m3_h", p, 1 - d.rng.uniform(0.08, 0.16))
    d.noisier("flow_m3_h", p, d.rng.uniform(4, 6))
    d.scale("discharge_pressure_bar", p, 1 - d.rng.uniform(0.03, 0.07))
    d.noisier("discharge_pressure_bar", p, d.rng.uniform(4, 6))
    d.scale("broadband", p, d.rng.uniform(1.3, 1.8))
    d.noisier("broadband", p, 10)
    d.scale("vib_hf_g", p, d.rng.uniform(1.2, 1.6))
    d.noisier("vib_hf_g", p, 5)
    d.shift("motor_current_a", p, -d.rng.uniform(0.8, 1.8))
    d.noisier("motor_current_a", p, d.rng.uniform(3, 5))
    d.evidence = ("suction_pressure_bar", "flow_m3_h")
    d.prefix = int(d.n * 0.25)


def _rotating(d: FaultDraft, band: str, other_factor: float, heat: float) -> None:
    onset = d.rng.uniform(0.3, 0.55)
    p = d.ramp(onset, duration=d.rng.uniform(0.1, 0.25), shape=d.rng.uniform(0.8, 1.4))
    target = d.band_for_overall(band, d.rng.uniform(4.9, 6.0))
    d.scale(band, p, target / d.signals[band].nominal)
    other = "vib_1x_mm_s" if band == "vib_2x_mm_s" else "vib_2x_mm_s"
    d.scale(other, p, other_factor)
    # Heat follows slowly (thermal lag): a slower ramp from the same onset.
    d.shift(TEMPERATURE[d.equipment], d.ramp(onset, duration=0.5), heat)
    d.evidence = (band, "vibration_mm_s")
    d.prefix = int(d.n * 0.25)


def _misalignment(d: FaultDraft) -> None:
    _rotating(d, "vib_2x_mm_s", d.rng.uniform(1.05, 1.3), d.rng.uniform(3.0, 8.0))
    d.shift("motor_current_a", d.ramp(0.5), d.rng.uniform(0.005, 0.015) * d.signals["motor_current_a"].nominal)


def _imbalance(d: FaultDraft) -> None:
    _rotating(d, "vib_1x_mm_s", 1.0, 0.0)


def _seal_leak(d: FaultDraft) -> None:
    p = d.ramp(d.rng.uniform(0.05, 0.25))
    d.shift("discharge_pressure_bar", p, d.rng.uniform(5.25, 5.4) - 6.2)
    d.scale("flow_m3_h", p, 1 - d.rng.uniform(0.06, 0.1))
    d.shift("motor_current_a", p, -d.rng.uniform(0.4, 1.0))
    d.evidence = ("discharge_pressure_bar", "flow_m3_h")
    d.prefix = int(d.n * 0.05)


def _belt_slip(d: FaultDraft) -> None:
    p = d.ramp(d.rng.uniform(0.3, 0.5))
    d.shift("belt_speed_m_s", p, d.rng.uniform(1.45, 1.55) - 1.8)
    d.noisier("belt_speed_m_s", p, d.rng.uniform(5, 8))
    d.shift("motor_current_a", p, d.rng.uniform(9.4, 10.2) - 12.5)
    d.noisier("motor_current_a", p, d.rng.uniform(4, 6))
    d.shift("gearbox_temp_c", p, d.rng.uniform(3.0, 8.0))
    d.evidence = ("belt_speed_m_s", "motor_current_a")
    d.prefix = int(d.n * 0.25)


_DRIFTS = {
    PUMP: (
        ("flow_m3_h", 96.0, 99.0),
        ("discharge_pressure_bar", 5.3, 5.45),
        ("motor_current_a", 52.5, 54.0),
        ("suction_pressure_bar", 0.7, 0.78),
    ),
    CONVEYOR: (("belt_speed_m_s", 1.5, 1.57), ("motor_current_a", 18.3, 19.0), ("motor_current_a", 9.5, 9.9)),
}


def _sensor_drift(d: FaultDraft) -> None:
    key, low, high = d.rng.choice(_DRIFTS[d.equipment])
    p = d.ramp(d.rng.uniform(0.1, 0.3))
    d.shift(key, p, d.rng.uniform(low, high) - d.signals[key].nominal)
    d.evidence, d.variant, d.prefix = (key,), f"drift:{key}", int(d.n * 0.1)


def _sensor_failure(d: FaultDraft) -> None:
    kind = d.rng.choice(("flatline_low", "flatline_high", "spikes"))
    temp = TEMPERATURE[d.equipment]
    if kind == "flatline_low":
        key = d.rng.choice([k for k in (*HYDRAULIC, *DRIVE) if k in d.signals and d.signals[k].low_alert is not None])
    elif kind == "flatline_high":
        key = d.rng.choice((temp, "vibration_mm_s"))
    else:
        key = d.rng.choice((temp, "vibration_mm_s"))
    stuck_at = int(d.n * d.rng.uniform(0.5, 0.7))
    fails_at = stuck_at + d.rng.randint(6, 30)
    spikes = sorted(d.rng.sample(range(int(d.n * 0.35), int(d.n * 0.9)), d.rng.randint(3, 6)))
    signal = d.signals[key]
    limit = min(v for v in (signal.alert, signal.high_alert, signal.trip) if v is not None) if signal.alert else None
    rng = d.rng

    def fail(series: dict[str, list[float]]) -> None:
        values = series[key]
        if kind == "spikes":
            # Single-sample excursions no process can make in one step; the last one crosses the limit.
            for i, at in enumerate(spikes):
                top = i == len(spikes) - 1
                height = (
                    (limit or signal.nominal * 2) * rng.uniform(1.2, 2.0)
                    if top
                    else signal.nominal * rng.uniform(1.3, 1.6)
                )
                values[at] = round(height, 4)
            return
        value_after = 0.0 if kind == "flatline_low" else RANGE_TOP[key]
        for i in range(stuck_at, d.n):
            values[i] = values[stuck_at] if i < fails_at else value_after

    d.post.append(fail)
    d.evidence, d.variant = (key,), f"{kind}:{key}"
    d.prefix = int(d.n * 0.3)


def _no_fault(d: FaultDraft) -> None:
    # A normal process swing that coupled signals share (throughput follows demand), and an alarm
    # limit set inside the noise band on one signal: the nuisance alarm an operator meets daily.
    period = d.rng.uniform(0.6, 1.5) * d.n
    phase = d.rng.uniform(0, 2 * math.pi)
    swing = [math.sin(2 * math.pi * i / period + phase) for i in range(d.n)]
    amplitude = d.rng.uniform(0.005, 0.015)
    for key, weight in (("flow_m3_h", 2.0), ("motor_current_a", 1.0), ("load_t_h", 2.0), ("belt_speed_m_s", 0.2)):
        if key in d.signals:
            d.mean[key] = [m * (1 + weight * amplitude * s) for m, s in zip(d.mean[key], swing, strict=True)]
    candidates = [k for k, s in d.signals.items() if s.alert is not None or s.low_alert is not None]
    key = d.rng.choice(candidates)
    high = d.signals[key].low_alert is None or d.rng.random() < 0.5
    start = int(d.n * 0.5)

    def tighten(series: dict[str, list[float]]) -> None:
        values = series[key]
        pairs = [min(a, b) if high else max(a, b) for a, b in zip(values[start:], values[start + 1 :], strict=False)]
        edge = max(pairs) if high else min(pairs)
        nudge = abs(d.signals[key].noise) * 0.05
        limit = round(edge - nudge if high else edge + nudge, 4)
        old = d.signals[key]
        d.signals[key] = (
            replace(old, alert=limit, high_alert=None, trip=None, deadband=0.0)
            if high
            else replace(old, low_alert=limit, deadband=0.0)
        )

    d.post.append(tighten)
    d.evidence, d.variant, d.prefix = (key,), f"tight_limit:{key}", start


FAULTS: dict[str, Callable[[FaultDraft], None]] = {
    "bearing_wear": _bearing_wear,
    "cavitation": _cavitation,
    "misalignment": _misalignment,
    "imbalance": _imbalance,
    "seal_leak": _seal_leak,
    "belt_slip": _belt_slip,
    "sensor_drift": _sensor_drift,
    "sensor_failure": _sensor_failure,
    "no_fault": _no_fault,
}
# Where each fault can happen: pump-only hydraulics, the conveyor's belt, the rest on either.
FAULT_EQUIPMENT = {"cavitation": (PUMP,), "seal_leak": (PUMP,), "belt_slip": (CONVEYOR,)}


def with_noise(d: FaultDraft, level: float) -> dict[str, list[float]]:
    noise = {key: s.noise for key, s in d.signals.items()}
    noise["broadband"] = d.signals["vib_2x_mm_s"].noise
    noisy: dict[str, list[float]] = {}
    for key in d.mean:  # dict order is fixed, so the draws are too
        deviation, values = 0.0, []
        for i in range(d.n):
            deviation = 0.7 * deviation + d.rng.gauss(0.0, noise[key] * level * d.noise_mult[key][i])
            values.append(max(0.0, d.mean[key][i] + deviation))
        noisy[key] = values
    # Overall vibration is the RMS sum of its bands plus the transmitter's own noise.
    rest = noisy.pop("broadband")
    bands = zip(noisy["vib_1x_mm_s"], noisy["vib_2x_mm_s"], rest, strict=True)
    noisy["vibration_mm_s"] = [
        math.sqrt(a * a + b * b + c * c) + v - d.mean["vibration_mm_s"][i]
        for i, ((a, b, c), v) in enumerate(zip(bands, noisy["vibration_mm_s"], strict=True))
    ]
    return {key: [round(v, 4) for v in noisy[key]] for key in d.signals}
