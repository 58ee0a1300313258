"""The equipment the fault library plays on: a centrifugal pump and a belt conveyor, their signals
(vibration overall plus 1×/2×/high-frequency band signals), normal values, noise and alarm limits.
Keys and names are those of any such machine; nothing here names a fault."""

from __future__ import annotations

from dataclasses import dataclass

PUMP = "centrifugal_pump"
CONVEYOR = "belt_conveyor"


@dataclass(frozen=True)
class EvalSignal:
    key: str
    display_name: str
    unit: str
    nominal: float
    noise: float
    low_alert: float | None = None
    alert: float | None = None
    high_alert: float | None = None
    trip: float | None = None
    deadband: float = 0.0
    on_delay_seconds: int = 0


def _vib(nominal: float, noise: float) -> EvalSignal:
    return EvalSignal("vibration_mm_s", "Vibration (RMS)", "mm/s", nominal, noise, alert=4.5, trip=7.1, deadband=0.2)


def _bands(one_x: float, two_x: float, hf: float) -> tuple[EvalSignal, ...]:
    return (
        EvalSignal("vib_1x_mm_s", "Vibration 1× running speed", "mm/s", one_x, one_x * 0.03),
        EvalSignal("vib_2x_mm_s", "Vibration 2× running speed", "mm/s", two_x, two_x * 0.04),
        EvalSignal("vib_hf_g", "High-frequency (bearing band) acceleration", "g", hf, hf * 0.04),
    )


SIGNALS: dict[str, tuple[EvalSignal, ...]] = {
    PUMP: (
        _vib(2.1, 0.04),
        *_bands(1.5, 0.8, 0.30),
        EvalSignal("bearing_temp_c", "Bearing temperature", "°C", 58.0, 0.3, alert=80.0, trip=95.0, deadband=1.0),
        EvalSignal(
            "discharge_pressure_bar", "Discharge pressure", "bar", 6.2, 0.05, 5.5, 8.5, deadband=0.1, on_delay_seconds=5
        ),
        EvalSignal("flow_m3_h", "Flow", "m³/h", 120.0, 1.5, 100.0, 160.0, deadband=2.0, on_delay_seconds=5),
        EvalSignal("motor_current_a", "Motor current", "A", 41.0, 0.4, alert=52.0, trip=60.0, deadband=0.5),
        EvalSignal(
            "suction_pressure_bar", "Suction pressure", "bar", 1.6, 0.03, 0.8, deadband=0.05, on_delay_seconds=5
        ),
    ),
    CONVEYOR: (
        EvalSignal("belt_speed_m_s", "Belt speed", "m/s", 1.8, 0.01, 1.6, 2.2, deadband=0.02, on_delay_seconds=5),
        EvalSignal("motor_current_a", "Motor current", "A", 12.5, 0.15, 10.0, 18.0, trip=22.0, deadband=0.3),
        EvalSignal("load_t_h", "Conveyed load", "t/h", 40.0, 0.6),
        EvalSignal("gearbox_temp_c", "Gearbox temperature", "°C", 61.0, 0.3, alert=85.0, trip=95.0, deadband=1.0),
        _vib(1.4, 0.03),
        *_bands(1.0, 0.5, 0.20),
    ),
}
TEMPERATURE = {PUMP: "bearing_temp_c", CONVEYOR: "gearbox_temp_c"}
# Signals whose physics ties them together: a lone mover among them is suspect.
HYDRAULIC = ("flow_m3_h", "discharge_pressure_bar", "motor_current_a", "suction_pressure_bar")
DRIVE = ("belt_speed_m_s", "motor_current_a", "load_t_h")
# Range ends of the transmitters (4–20 mA): a dead loop reads the bottom, a shorted one the top.
RANGE_TOP = {"bearing_temp_c": 150.0, "gearbox_temp_c": 150.0, "vibration_mm_s": 25.0}
