"""A library of equipment faults with ground truth, for scoring diagnosis (`manage.py eval_rca`).

Each fault is a pattern across a cell's signals (DOMAIN.md "Fault signatures"): 1 Hz RMS values
modelled as one sample per `step_seconds`, vibration split into band signals (1× and 2× running
speed, high-frequency bearing band) beside the overall value. Noise is mean-reverting (AR(1)), its
size scaled by `noise_level`; onsets, magnitudes, which signal fails and how are drawn from `seed`,
so `generate(name, seed=…)` is deterministic and two seeds give two different cases.

Nothing in a case's signals names its fault: keys and display names are those of any pump or
conveyor; only `FaultCase.scenario` (kept by the evaluator, never ingested) holds the answer.
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
    SIGNALS,
    TEMPERATURE,
    EvalSignal,
)
from sentinel.thresholds import evaluate_threshold

FAULT_SCENARIOS: tuple[str, ...] = (
    "bearing_wear",
    "cavitation",
    "misalignment",
    "imbalance",
    "seal_leak",
    "belt_slip",
    "sensor_drift",
    "sensor_failure",
    "no_fault",
)


@dataclass
class FaultCase:
    """One generated case: the signals to create, their values per step, and the ground truth."""

    scenario: str  # ground truth failure mode slug (never ingested)
    variant: str  # how it showed (e.g. "flatline_low:flow_m3_h"); ground truth detail
    seed: int
    noise_level: float
    equipment_type: str
    signals: tuple[EvalSignal, ...]
    step_seconds: int
    series: dict[str, list[float]]
    evidence: tuple[str, ...]  # signal keys that carry the signature
    prefix: int  # leading samples that are plain history (fed as one batch before the live feed)

    @property
    def steps(self) -> int:
        return len(next(iter(self.series.values())))


@dataclass
class _Draft:
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
        levels["broadband"] = _broadband(self.signals)
        others = sum(v**2 for k, v in levels.items() if k != band)
        return math.sqrt(max(overall**2 - others, 0.01))


def _broadband(signals: dict[str, EvalSignal]) -> float:
    """The rest of the overall vibration (not 1×/2×), at nominal."""
    rest = (
        signals["vibration_mm_s"].nominal ** 2
        - signals["vib_1x_mm_s"].nominal ** 2
        - signals["vib_2x_mm_s"].nominal ** 2
    )
    return math.sqrt(max(rest, 0.01))


# --- the faults ---------------------------------------------------------------------------------


def _bearing_wear(d: _Draft) -> None:
    p = d.ramp(d.rng.uniform(0.15, 0.4), shape=d.rng.uniform(1.3, 1.8))
    d.scale("vib_hf_g", p, d.rng.uniform(5.0, 8.0))
    d.scale("broadband", p, d.band_for_overall("broadband", d.rng.uniform(4.9, 6.0)) / _broadband(d.signals))
    d.scale("vib_1x_mm_s", p, 1.1)
    d.shift(TEMPERATURE[d.equipment], p, d.rng.uniform(6.0, 14.0))
    d.shift("motor_current_a", p, d.rng.uniform(0.02, 0.04) * d.signals["motor_current_a"].nominal)
    d.evidence = ("vib_hf_g", TEMPERATURE[d.equipment], "vibration_mm_s")
    d.prefix = int(d.n * 0.15)


def _cavitation(d: _Draft) -> None:
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


def _rotating(d: _Draft, band: str, other_factor: float, heat: float) -> None:
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


def _misalignment(d: _Draft) -> None:
    _rotating(d, "vib_2x_mm_s", d.rng.uniform(1.05, 1.3), d.rng.uniform(3.0, 8.0))
    d.shift("motor_current_a", d.ramp(0.5), d.rng.uniform(0.005, 0.015) * d.signals["motor_current_a"].nominal)


def _imbalance(d: _Draft) -> None:
    _rotating(d, "vib_1x_mm_s", 1.0, 0.0)


def _seal_leak(d: _Draft) -> None:
    p = d.ramp(d.rng.uniform(0.05, 0.25))
    d.shift("discharge_pressure_bar", p, d.rng.uniform(5.25, 5.4) - 6.2)
    d.scale("flow_m3_h", p, 1 - d.rng.uniform(0.06, 0.1))
    d.shift("motor_current_a", p, -d.rng.uniform(0.4, 1.0))
    d.evidence = ("discharge_pressure_bar", "flow_m3_h")
    d.prefix = int(d.n * 0.05)


def _belt_slip(d: _Draft) -> None:
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


def _sensor_drift(d: _Draft) -> None:
    key, low, high = d.rng.choice(_DRIFTS[d.equipment])
    p = d.ramp(d.rng.uniform(0.1, 0.3))
    d.shift(key, p, d.rng.uniform(low, high) - d.signals[key].nominal)
    d.evidence, d.variant, d.prefix = (key,), f"drift:{key}", int(d.n * 0.1)


def _sensor_failure(d: _Draft) -> None:
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


def _no_fault(d: _Draft) -> None:
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


_FAULTS: dict[str, Callable[[_Draft], None]] = {
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
_EQUIPMENT = {"cavitation": (PUMP,), "seal_leak": (PUMP,), "belt_slip": (CONVEYOR,)}


def equipment_for(scenario: str) -> tuple[str, ...]:
    """The equipment types a fault can happen on."""
    return _EQUIPMENT.get(scenario, (PUMP, CONVEYOR))


def generate(
    scenario: str,
    *,
    seed: int,
    noise_level: float = 1.0,
    minutes: int = 120,
    step_seconds: int = 30,
    equipment: str | None = None,
) -> FaultCase:
    """One case of `scenario` (a FAULT_SCENARIOS name); deterministic per (scenario, seed, noise).
    `equipment` pins the equipment type (one of `equipment_for(scenario)`); default: drawn by seed."""
    if scenario not in _FAULTS:
        raise ValueError(f"Unknown fault scenario {scenario!r}; known: {', '.join(FAULT_SCENARIOS)}")
    if equipment is not None and equipment not in equipment_for(scenario):
        raise ValueError(f"{scenario} does not happen on {equipment!r}")
    rng = random.Random(f"{scenario}:{seed}")
    drawn = rng.choice(_EQUIPMENT.get(scenario, (PUMP, PUMP, CONVEYOR)))
    equipment = equipment or drawn
    n = max(20, minutes * 60 // step_seconds)
    signals = {s.key: s for s in SIGNALS[equipment]}
    mean = {key: [s.nominal] * n for key, s in signals.items()}
    mean["broadband"] = [_broadband(signals)] * n
    noise_mult = {key: [1.0] * n for key in mean}
    draft = _Draft(rng, equipment, n, mean, noise_mult, signals)
    _FAULTS[scenario](draft)
    series = _with_noise(draft, noise_level)
    for step in draft.post:
        step(series)
    return FaultCase(
        scenario=scenario,
        variant=draft.variant or scenario,
        seed=seed,
        noise_level=noise_level,
        equipment_type=equipment,
        signals=tuple(draft.signals[s.key] for s in SIGNALS[equipment]),
        step_seconds=step_seconds,
        series=series,
        evidence=draft.evidence,
        prefix=max(1, draft.prefix),
    )


def _with_noise(d: _Draft, level: float) -> dict[str, list[float]]:
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


def first_alarm_step(case: FaultCase) -> int | None:
    """The step at which the live feed raises the first alarm (the history batch evaluates only its
    last sample; with an on-delay a breach must still hold on the next step), or None."""

    for i in range(case.prefix - 1, case.steps):
        for signal in case.signals:
            values = case.series[signal.key]
            if not evaluate_threshold(signal, values[i]).breached:
                continue
            held = i >= case.prefix and evaluate_threshold(signal, values[i - 1]).breached
            if not signal.on_delay_seconds or held:
                return i
    return None


def case_set(
    *, held_out: bool = False, repeat: int = 1, scenarios: list[str] | None = None
) -> list[tuple[str, int, float]]:
    """(scenario, seed, noise level) of the main set, or of the held-out set: other seeds, 1.6× noise."""
    names = scenarios or list(FAULT_SCENARIOS)
    base, noise = (90_000, 1.6) if held_out else (1_000, 1.0)
    return [(name, base + r, noise) for r in range(repeat) for name in names]


def simulator_ramps() -> dict[str, tuple[str, dict[tuple[str, str], Callable[[float], float]]]]:
    """Faults the live simulator can play on the demo plant (means only; its own noise is added)."""

    def lin(a: float, b: float, ease: float = 1.0) -> Callable[[float], float]:
        return lambda p: a + (b - a) * p**ease

    def wobble(a: float, b: float, size: float) -> Callable[[float], float]:
        return lambda p: a + (b - a) * p + size * p * math.sin(p * 157.0)

    return {
        "fault-cavitation": (
            "P-02 cavitation: suction pressure falls below 0.8 bar, flow and discharge pressure unstable.",
            {
                ("P-02", "suction_pressure_bar"): lin(1.6, 0.65),
                ("P-02", "flow_m3_h"): wobble(120.0, 100.0, 8.0),
                ("P-02", "discharge_pressure_bar"): wobble(6.2, 5.9, 0.3),
                ("P-02", "vibration_mm_s"): wobble(2.1, 3.2, 0.6),
            },
        ),
        "fault-seal-leak": (
            "P-02 seal leak: discharge pressure slowly down to 2.8 bar, flow slightly down.",
            {("P-02", "discharge_pressure_bar"): lin(6.2, 2.8), ("P-02", "flow_m3_h"): lin(120.0, 108.0)},
        ),
        "fault-flow-drift": (
            "P-02 flow transmitter drift: flow reads down to 78 m³/h while pressure and current hold.",
            {("P-02", "flow_m3_h"): lin(120.0, 78.0)},
        ),
        "fault-belt-slip": (
            "CV-03 belt slip: belt speed down to 1.1 m/s, motor current down, gearbox warmer.",
            {
                ("CV-03", "belt_speed_m_s"): wobble(1.8, 1.1, 0.05),
                ("CV-03", "motor_current_a"): wobble(12.5, 9.8, 0.6),
                ("CV-03", "gearbox_temp_c"): lin(61.0, 67.0),
            },
        ),
    }
