"""A library of equipment faults with ground truth, for scoring diagnosis (`manage.py eval_rca`).

Each fault is a pattern across a cell's signals (DOMAIN.md "Fault signatures"): 1 Hz RMS values
modelled as one sample per `step_seconds`, vibration split into band signals (1× and 2× running
speed, high-frequency bearing band) beside the overall value. Noise is mean-reverting (AR(1)), its
size scaled by `noise_level`; onsets, magnitudes, which signal fails and how are drawn from `seed`,
so `generate(name, seed=…)` is deterministic and two seeds give two different cases.

Nothing in a case's signals names its fault: keys and display names are those of any pump or
conveyor; only `FaultCase.scenario` (kept by the evaluator, never ingested) holds the answer.
How each fault bends the signals, and the noise, live in sentinel.fault_signatures.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from sentinel.fault_equipment import CONVEYOR, PUMP, SIGNALS, EvalSignal
from sentinel.fault_signatures import FAULT_EQUIPMENT, FAULTS, FaultDraft, broadband_nominal, with_noise
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


def equipment_for(scenario: str) -> tuple[str, ...]:
    """The equipment types a fault can happen on."""
    return FAULT_EQUIPMENT.get(scenario, (PUMP, CONVEYOR))


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
    if scenario not in FAULTS:
        raise ValueError(f"Unknown fault scenario {scenario!r}; known: {', '.join(FAULT_SCENARIOS)}")
    if equipment is not None and equipment not in equipment_for(scenario):
        raise ValueError(f"{scenario} does not happen on {equipment!r}")
    rng = random.Random(f"{scenario}:{seed}")
    drawn = rng.choice(FAULT_EQUIPMENT.get(scenario, (PUMP, PUMP, CONVEYOR)))
    equipment = equipment or drawn
    n = max(20, minutes * 60 // step_seconds)
    signals = {s.key: s for s in SIGNALS[equipment]}
    mean = {key: [s.nominal] * n for key, s in signals.items()}
    mean["broadband"] = [broadband_nominal(signals)] * n
    noise_mult = {key: [1.0] * n for key in mean}
    draft = FaultDraft(rng, equipment, n, mean, noise_mult, signals)
    FAULTS[scenario](draft)
    series = with_noise(draft, noise_level)
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
