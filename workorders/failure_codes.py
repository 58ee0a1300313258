"""The failure-code list (ISO 14224 style, as mature CMMS keep it): class → problem → cause → remedy.

Classes are equipment classes (matched against a cell's `equipment_type`); a problem names the
ARIA failure-mode slug the agents use (bearing_wear, cavitation, …) with the ISO failure mode
(what was observed) and mechanism (how it failed); causes are grouped as in ISO 14224 (design,
fabrication/installation, operation/maintenance, management, miscellaneous) and apply to every
problem; remedies are the maintenance activities. Seeded by `workorders/seed.py` (idempotent).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from workorders.choices import FailureCodeLevel as L

# class code → (label, equipment_type keyword)
CLASSES: dict[str, tuple[str, str]] = {
    "PUMP": ("Centrifugal pump", "pump"),
    "COMPRESSOR": ("Compressor", "compressor"),
    "CONVEYOR": ("Belt conveyor", "conveyor"),
    "PRESS": ("Hydraulic press", "press"),
}

# slug → (label, ISO failure mode, ISO mechanism)
PROBLEMS: dict[str, tuple[str, str, str]] = {
    "bearing_wear": ("Bearing wear", "VIB", "wear"),
    "cavitation": ("Cavitation", "NOI", "cavitation"),
    "misalignment": ("Misalignment", "VIB", "clearance_alignment"),
    "imbalance": ("Imbalance", "VIB", "vibration"),
    "seal_leak": ("Seal leak", "ELP", "leakage"),
    "valve_failure": ("Valve failure", "PDE", "sticking"),
    "belt_slip": ("Belt slip", "LOO", "looseness"),
    "belt_misalignment": ("Belt mistracking", "ERO", "clearance_alignment"),
    "overheating": ("Overheating", "OHE", "overheating"),
    "sensor_drift": ("Sensor drift", "AIR", "out_of_adjustment"),
    "sensor_failure": ("Sensor failure (flatline, spikes)", "AIR", "faulty_signal"),
    "electrical_fault": ("Electrical fault", "FTS", "earth_fault"),
}

CLASS_PROBLEMS: dict[str, tuple[str, ...]] = {
    "PUMP": (
        "bearing_wear",
        "cavitation",
        "misalignment",
        "imbalance",
        "seal_leak",
        "overheating",
        "sensor_drift",
        "sensor_failure",
        "electrical_fault",
    ),
    "COMPRESSOR": (
        "valve_failure",
        "misalignment",
        "bearing_wear",
        "overheating",
        "sensor_drift",
        "sensor_failure",
        "electrical_fault",
    ),
    "CONVEYOR": (
        "belt_slip",
        "belt_misalignment",
        "bearing_wear",
        "misalignment",
        "sensor_drift",
        "sensor_failure",
        "electrical_fault",
    ),
    "PRESS": ("seal_leak", "valve_failure", "overheating", "sensor_drift", "sensor_failure", "electrical_fault"),
}

# code → (label, ISO cause group)
CAUSES: dict[str, tuple[str, str]] = {
    "DES-CAPACITY": ("Design: inadequate capacity or material", "design"),
    "FAB-INSTALL": ("Installation or assembly error", "fabrication_installation"),
    "FAB-ALIGN": ("Poor alignment after installation or service", "fabrication_installation"),
    "OM-LUBRICATION": ("Missed or wrong lubrication", "operation_maintenance"),
    "OM-OFF-DESIGN": ("Operated outside its design point (e.g. low suction head)", "operation_maintenance"),
    "OM-WEAR-OUT": ("Normal wear and ageing", "operation_maintenance"),
    "OM-PM-MISSED": ("Preventive maintenance missed or late", "operation_maintenance"),
    "OM-CALIBRATION": ("Instrument out of calibration", "operation_maintenance"),
    "MGT-PROCEDURE": ("Procedure or documentation error", "management"),
    "MISC-CONTAMINATION": ("Contamination or blockage (debris, clogged strainer)", "miscellaneous"),
    "MISC-EXTERNAL": ("External influence (weather, foreign object, power)", "miscellaneous"),
    "MISC-UNKNOWN": ("Cause not found", "miscellaneous"),
}

REMEDIES: dict[str, str] = {
    "RPL": "Replace",
    "RPR": "Repair",
    "ADJ": "Adjust / align",
    "MOD": "Modify",
    "CHK": "Check (no fault found)",
    "SRV": "Service (clean, lubricate)",
    "OVH": "Overhaul",
    "RFT": "Refit",
    "CAL": "Calibrate",
}


def problem_code(class_code: str, slug: str) -> str:
    return f"{class_code}.{slug}"


def seed_failure_codes(model: Any) -> int:
    """Create the code list (idempotent); returns how many codes were created. `model` is the
    FailureCode class: the seed passes workorders.models.FailureCode, a migration its historical
    model (so this module, which migration 0002 imports, never imports the current models)."""
    created = 0
    with transaction.atomic():
        classes: dict[str, Any] = {}
        for code, (label, keyword) in CLASSES.items():
            classes[code], new = model.objects.get_or_create(
                level=L.CLASS, code=code, defaults={"label": label, "equipment_type": keyword}
            )
            created += new
        for class_code, slugs in CLASS_PROBLEMS.items():
            for slug in slugs:
                label, iso_mode, mechanism = PROBLEMS[slug]
                _, new = model.objects.get_or_create(
                    level=L.PROBLEM,
                    code=problem_code(class_code, slug),
                    defaults={
                        "label": label,
                        "parent": classes[class_code],
                        "failure_mode": slug,
                        "iso_mode": iso_mode,
                        "iso_mechanism": mechanism,
                    },
                )
                created += new
        for code, (label, group) in CAUSES.items():
            _, new = model.objects.get_or_create(
                level=L.CAUSE, code=code, defaults={"label": label, "iso_group": group}
            )
            created += new
        for code, label in REMEDIES.items():
            _, new = model.objects.get_or_create(level=L.REMEDY, code=code, defaults={"label": label})
            created += new
    return created
