"""The demo plant: cells, signals, thresholds (from DOMAIN.md) and each signal's normal behaviour.

Shared by the seed (which creates it) and the simulator (which feeds it). Thresholds follow
ISO 10816-3 for vibration (alert 4.5 mm/s, trip 7.1 mm/s); pressure and flow are double-sided.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SignalSpec:
    key: str
    display_name: str
    unit: str
    nominal: float  # normal operating value
    noise: float  # standard deviation of the measurement noise
    low_alert: float | None = None
    alert: float | None = None
    high_alert: float | None = None
    trip: float | None = None
    deadband: float = 0.0
    on_delay_seconds: int = 0


@dataclass(frozen=True)
class CellSpec:
    tag: str
    name: str
    equipment_type: str
    line: str
    onboarded: bool
    signals: tuple[SignalSpec, ...] = field(default_factory=tuple)


SITE = "Riverside Plant"
LINE_UTILITIES = "Line 1 — Utilities"
LINE_PACKAGING = "Line 2 — Packaging"

CELLS: tuple[CellSpec, ...] = (
    CellSpec(
        "P-02",
        "Cooling water pump P-02",
        "centrifugal_pump",
        LINE_UTILITIES,
        True,
        (
            SignalSpec("vibration_mm_s", "Vibration (RMS)", "mm/s", 2.1, 0.06, alert=4.5, trip=7.1, deadband=0.2),
            SignalSpec("bearing_temp_c", "Bearing temperature", "°C", 58.0, 0.3, alert=80.0, trip=95.0, deadband=1.0),
            SignalSpec(
                "discharge_pressure_bar",
                "Discharge pressure",
                "bar",
                6.2,
                0.05,
                low_alert=3.0,
                alert=8.5,
                deadband=0.1,
                on_delay_seconds=5,
            ),
            SignalSpec(
                "flow_m3_h", "Flow", "m³/h", 120.0, 1.5, low_alert=80.0, alert=160.0, deadband=2.0, on_delay_seconds=5
            ),
            SignalSpec("motor_current_a", "Motor current", "A", 41.0, 0.4, alert=52.0, trip=60.0, deadband=0.5),
            SignalSpec(
                "suction_pressure_bar",
                "Suction pressure",
                "bar",
                1.6,
                0.03,
                low_alert=0.8,
                deadband=0.05,
                on_delay_seconds=5,
            ),
        ),
    ),
    CellSpec(
        "C-01",
        "Instrument air compressor C-01",
        "screw_compressor",
        LINE_UTILITIES,
        True,
        (
            SignalSpec(
                "discharge_pressure_bar",
                "Discharge pressure",
                "bar",
                7.8,
                0.05,
                low_alert=6.0,
                alert=9.5,
                trip=10.5,
                deadband=0.1,
            ),
            SignalSpec(
                "discharge_temp_c", "Discharge temperature", "°C", 82.0, 0.4, alert=100.0, trip=110.0, deadband=1.0
            ),
            SignalSpec("vibration_mm_s", "Vibration (RMS)", "mm/s", 1.8, 0.05, alert=4.5, trip=7.1, deadband=0.2),
            SignalSpec("motor_current_a", "Motor current", "A", 118.0, 1.0, alert=140.0, trip=155.0, deadband=1.0),
        ),
    ),
    CellSpec(
        "CV-03",
        "Case conveyor CV-03",
        "belt_conveyor",
        LINE_PACKAGING,
        True,
        (
            SignalSpec(
                "belt_speed_m_s",
                "Belt speed",
                "m/s",
                1.8,
                0.01,
                low_alert=1.2,
                alert=2.2,
                deadband=0.02,
                on_delay_seconds=5,
            ),
            SignalSpec("motor_current_a", "Motor current", "A", 12.5, 0.15, alert=18.0, trip=22.0, deadband=0.3),
            SignalSpec("gearbox_temp_c", "Gearbox temperature", "°C", 61.0, 0.3, alert=85.0, trip=95.0, deadband=1.0),
            SignalSpec("vibration_mm_s", "Vibration (RMS)", "mm/s", 1.4, 0.04, alert=4.5, trip=7.1, deadband=0.2),
        ),
    ),
    CellSpec(
        "PR-05",
        "Carton press PR-05 (commissioning)",
        "hydraulic_press",
        LINE_PACKAGING,
        False,
        (
            SignalSpec(
                "hydraulic_pressure_bar",
                "Hydraulic pressure",
                "bar",
                180.0,
                1.0,
                low_alert=150.0,
                alert=210.0,
                deadband=2.0,
            ),
            SignalSpec("oil_temp_c", "Oil temperature", "°C", 48.0, 0.3, alert=65.0, trip=75.0, deadband=1.0),
        ),
    ),
)


def spec_for(tag: str, key: str) -> SignalSpec | None:
    for cell in CELLS:
        if cell.tag == tag:
            for signal in cell.signals:
                if signal.key == key:
                    return signal
    return None
