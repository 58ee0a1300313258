"""Demo equipment KB content per equipment type (DOMAIN.md failure modes and signatures)."""

from typing import Any

PUMP: dict[str, Any] = {
    "equipment": {
        "type": "centrifugal pump",
        "manufacturer": "KSB",
        "model": "Etanorm 100-250",
        "rated_speed_rpm": 2950,
        "rated_power_kw": 55,
        "bearings": {"drive_end": "SKF 6310-2Z/C3", "non_drive_end": "SKF 6308-2Z/C3"},
        "seal": "Mechanical seal, cartridge type",
    },
    "vibration_zones_mm_s": {"good": "< 2.3", "acceptable": "2.3–4.5", "alert": "4.5–7.1", "trip": "> 7.1"},
    "failure_modes": {
        "bearing_wear": {
            "signals": ["vibration_mm_s", "bearing_temp_c"],
            "signatures": ["vibration rising over hours to days", "bearing temperature up"],
            "remedy": "Replace the drive-end bearing, renew the grease and check alignment after assembly.",
            "procedure": "PR-PMP-BRG-01",
            "parts": [
                {"ref": "SKF-6310-2Z-C3", "qty": 1},
                {"ref": "SKF-6308-2Z-C3", "qty": 1},
                {"ref": "GREASE-LGHP2", "qty": 1},
            ],
            "skills": ["mechanical", "vibration_analysis"],
            "duration_min": 240,
        },
        "cavitation": {
            "signals": ["suction_pressure_bar", "flow_m3_h", "vibration_mm_s"],
            "signatures": ["noisy vibration", "suction pressure low", "flow unstable"],
            "remedy": "Restore suction head: clean the suction strainer, check the inlet valve and tank level.",
            "procedure": "PR-PMP-CAV-01",
            "parts": [{"ref": "STRAINER-DN100", "qty": 1}],
            "skills": ["mechanical", "process"],
            "duration_min": 90,
        },
        "misalignment": {
            "signals": ["vibration_mm_s", "motor_current_a"],
            "signatures": ["vibration at 2× running speed", "coupling heat"],
            "remedy": "Laser-align pump and motor; replace the coupling insert if worn.",
            "procedure": "PR-PMP-ALN-01",
            "parts": [{"ref": "COUPLING-INSERT-N-EUPEX-140", "qty": 1}],
            "skills": ["mechanical", "laser_alignment"],
            "duration_min": 150,
        },
        "seal_leak": {
            "signals": ["discharge_pressure_bar"],
            "signatures": ["pressure drop", "logbook reports of drips"],
            "remedy": "Replace the mechanical seal cartridge.",
            "procedure": "PR-PMP-SEAL-01",
            "parts": [{"ref": "SEAL-CART-45", "qty": 1}, {"ref": "ORING-KIT-PMP", "qty": 1}],
            "skills": ["mechanical"],
            "duration_min": 180,
        },
    },
    "spare_parts": [
        {"ref": "SKF-6310-2Z-C3", "name": "Drive-end bearing 6310-2Z/C3", "on_hand": 2},
        {"ref": "SKF-6308-2Z-C3", "name": "Non-drive-end bearing 6308-2Z/C3", "on_hand": 2},
        {"ref": "GREASE-LGHP2", "name": "Bearing grease SKF LGHP 2 (420 ml)", "on_hand": 6},
        {"ref": "STRAINER-DN100", "name": "Suction strainer basket DN100", "on_hand": 1},
        {"ref": "COUPLING-INSERT-N-EUPEX-140", "name": "Coupling elastomer insert", "on_hand": 3},
        {"ref": "SEAL-CART-45", "name": "Mechanical seal cartridge 45 mm", "on_hand": 1},
        {"ref": "ORING-KIT-PMP", "name": "Pump O-ring kit", "on_hand": 4},
    ],
    "procedures": {
        "PR-PMP-BRG-01": {
            "title": "Replace pump bearings",
            "steps": [
                "Isolate, lock out and drain the pump (LOTO)",
                "Remove the coupling guard and the coupling",
                "Pull the drive-end and non-drive-end bearings",
                "Fit new bearings and fill with LGHP 2 grease",
                "Reassemble, laser-align, and test-run for 30 min watching vibration",
            ],
        },
        "PR-PMP-CAV-01": {
            "title": "Clear the suction side",
            "steps": [
                "Isolate the pump",
                "Clean the suction strainer",
                "Check the inlet valve",
                "Restart and verify suction pressure",
            ],
        },
        "PR-PMP-ALN-01": {
            "title": "Align pump and motor",
            "steps": [
                "Lock out the motor",
                "Check soft foot",
                "Laser-align to 0.05 mm",
                "Replace the coupling insert if worn",
            ],
        },
        "PR-PMP-SEAL-01": {
            "title": "Replace the mechanical seal",
            "steps": [
                "Isolate and drain",
                "Remove the cartridge seal",
                "Fit the new cartridge and O-rings",
                "Leak test",
            ],
        },
    },
    "lubrication": {"grease": "SKF LGHP 2", "interval_h": 4000},
}

COMPRESSOR: dict[str, Any] = {
    "equipment": {"type": "screw compressor", "manufacturer": "Atlas Copco", "model": "GA 55", "rated_power_kw": 55},
    "failure_modes": {
        "valve_failure": {
            "signals": ["discharge_temp_c", "discharge_pressure_bar"],
            "signatures": ["discharge temperature up", "pressure unstable"],
            "remedy": "Replace the minimum-pressure valve.",
            "procedure": "PR-CMP-VLV-01",
            "parts": [{"ref": "MPV-KIT-GA55", "qty": 1}],
            "skills": ["mechanical", "pneumatics"],
            "duration_min": 120,
        },
        "misalignment": {
            "signals": ["vibration_mm_s"],
            "signatures": ["vibration at 2× running speed"],
            "remedy": "Realign the motor coupling.",
            "procedure": "PR-CMP-ALN-01",
            "parts": [{"ref": "COUPLING-INSERT-GA55", "qty": 1}],
            "skills": ["mechanical", "laser_alignment"],
            "duration_min": 150,
        },
    },
    "spare_parts": [
        {"ref": "MPV-KIT-GA55", "name": "Minimum pressure valve kit", "on_hand": 1},
        {"ref": "COUPLING-INSERT-GA55", "name": "Coupling insert", "on_hand": 2},
        {"ref": "OIL-FILTER-GA55", "name": "Oil filter", "on_hand": 4},
    ],
    "procedures": {
        "PR-CMP-VLV-01": {
            "title": "Replace the minimum-pressure valve",
            "steps": ["Depressurise", "Swap the valve", "Leak test"],
        },
        "PR-CMP-ALN-01": {"title": "Align the motor coupling", "steps": ["Lock out", "Laser-align", "Test run"]},
    },
}

CONVEYOR: dict[str, Any] = {
    "equipment": {"type": "belt conveyor", "length_m": 42, "drive_kw": 11},
    "failure_modes": {
        "belt_misalignment": {
            "signals": ["motor_current_a", "belt_speed_m_s"],
            "signatures": ["current spikes", "belt tracking off"],
            "remedy": "Re-track the belt and adjust the idlers.",
            "procedure": "PR-CNV-TRK-01",
            "parts": [],
            "skills": ["mechanical"],
            "duration_min": 60,
        },
        "bearing_wear": {
            "signals": ["vibration_mm_s"],
            "signatures": ["vibration rising at the head pulley"],
            "remedy": "Replace the head-pulley bearing.",
            "procedure": "PR-CNV-BRG-01",
            "parts": [{"ref": "SKF-22212-E", "qty": 1}],
            "skills": ["mechanical"],
            "duration_min": 180,
        },
    },
    "spare_parts": [{"ref": "SKF-22212-E", "name": "Head pulley bearing", "on_hand": 1}],
    "procedures": {
        "PR-CNV-TRK-01": {
            "title": "Re-track the belt",
            "steps": ["Stop and lock out", "Adjust the idlers", "Run empty, check tracking"],
        },
        "PR-CNV-BRG-01": {
            "title": "Replace the head-pulley bearing",
            "steps": ["Lock out", "Relieve belt tension", "Swap the bearing"],
        },
    },
}


PRESS: dict[str, Any] = {
    "equipment": {"type": "hydraulic press", "force_kn": 800, "hydraulic_oil": "HLP 46"},
    "failure_modes": {
        "seal_leak": {
            "signals": ["hydraulic_pressure_bar"],
            "signatures": ["pressure decay while holding", "oil under the cylinder"],
            "remedy": "Replace the main cylinder seal kit.",
            "procedure": "PR-PRS-SEAL-01",
            "parts": [{"ref": "SEAL-KIT-CYL-125", "qty": 1}, {"ref": "OIL-HLP46-20L", "qty": 1}],
            "skills": ["hydraulics", "mechanical"],
            "duration_min": 300,
        },
    },
    "spare_parts": [
        {"ref": "SEAL-KIT-CYL-125", "name": "Cylinder seal kit Ø125", "on_hand": 1},
        {"ref": "OIL-HLP46-20L", "name": "Hydraulic oil HLP 46 (20 l)", "on_hand": 3},
    ],
    "procedures": {
        "PR-PRS-SEAL-01": {
            "title": "Replace the cylinder seals",
            "steps": ["Lower and block the ram", "Depressurise", "Swap the seal kit", "Bleed and pressure test"],
        },
    },
}


def kb_for(equipment_type: str) -> dict[str, Any]:
    kind = (equipment_type or "").lower()
    if "compress" in kind:
        return COMPRESSOR
    if "convey" in kind:
        return CONVEYOR
    if "press" in kind and "pump" not in kind:
        return PRESS
    return PUMP
