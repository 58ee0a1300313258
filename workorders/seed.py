"""Demo data for workorders (idempotent; runs after sentinel's seed): a KB per cell, three months
of failure history (a bearing_wear on P-02 that the Investigator will recognise), logbook
entries, shifts and production records."""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta

from django.db import transaction
from django.utils import timezone

from sentinel.models import Cell, Line, Site
from workorders.choices import FailureVerification, Shift
from workorders.demo_kb import kb_for
from workorders.failure_codes import seed_failure_codes
from workorders.models import EquipmentKB, FailureCode, FailureHistory, LogbookEntry, ProductionRecord, ShiftAssignment

P02 = "P-02"

# tag → [(days ago, failure mode, repair hours, root cause, signal patterns)]
HISTORY: dict[str, list[tuple[int, str, float, str, dict]]] = {
    P02: [
        (
            58,
            "bearing_wear",
            5.5,
            "Drive-end bearing outer race worn; grease degraded after a missed lubrication round.",
            {"vibration_mm_s": {"peak": 5.4, "duration_min": 14}},
        ),
        (
            84,
            "cavitation",
            4.0,
            "Suction strainer clogged; suction pressure fell below the NPSH margin, flow unstable.",
            {
                "suction_pressure_bar": {"peak": 0.6, "duration_min": 25},
                "flow_m3_h": {"peak": 72.0, "duration_min": 20},
            },
        ),
    ],
    "C-01": [
        (
            33,
            "misalignment",
            2.5,
            "Motor coupling misaligned after motor replacement; vibration at 2× running speed.",
            {"vibration_mm_s": {"peak": 8.2, "duration_min": 3}},
        )
    ],
    "CV-03": [
        (
            47,
            "misalignment",
            1.5,
            "Gearbox-to-drive-pulley coupling misaligned; coupling warm, vibration up.",
            {"vibration_mm_s": {"peak": 6.1, "duration_min": 9}, "gearbox_temp_c": {"peak": 86.0, "duration_min": 30}},
        )
    ],
    "PR-05": [
        (
            71,
            "seal_leak",
            6.0,
            "Main cylinder seal leaking; pressure decay while holding, oil under the cylinder.",
            {"hydraulic_pressure_bar": {"peak": 148.0, "duration_min": 40}},
        )
    ],
}
TECHNICIANS = [
    ("Marta Silva", "mechanical technician", ["mechanical", "vibration_analysis", "laser_alignment"]),
    ("Jonas Weber", "electrical technician", ["electrical", "motors"]),
    ("Aiko Tanaka", "mechanical technician", ["mechanical", "process"]),
    ("Luis Romero", "reliability engineer", ["vibration_analysis", "process"]),
    ("Eva Novak", "mechanical technician", ["mechanical", "pneumatics", "laser_alignment"]),
    ("Tom Baker", "operator", ["process"]),
]
SHIFT_HOURS = {Shift.MORNING: 6, Shift.AFTERNOON: 14, Shift.NIGHT: 22}


def _p02() -> Cell:
    cell = Cell.objects.filter(tag=P02).first()
    if cell is not None:
        return cell
    site, _ = Site.objects.get_or_create(name="Demo Plant")
    line, _ = Line.objects.get_or_create(site=site, name="Line 1")
    return Cell.objects.create(
        line=line, tag=P02, name="Cooling water pump", equipment_type="pump", onboarding_complete=True
    )


def _failure(cell: Cell, days: int, mode: str, hours: float, cause: str, patterns: dict) -> bool:
    failure_time = (timezone.now() - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
    _, created = FailureHistory.objects.get_or_create(
        cell=cell,
        failure_mode=mode,
        root_cause=cause,
        defaults={
            "failure_time": failure_time,
            "resolved_time": failure_time + timedelta(hours=hours),
            "signal_patterns": patterns,
            "verification": FailureVerification.CONFIRMED,  # the plant's recorded history
            "confirmed_failure_mode": mode,
        },
    )
    return created


def _logbook(cells: list[Cell]) -> int:
    now = timezone.now()
    created = 0
    for cell in cells:
        notes = [
            (20, Shift.MORNING, "observation", f"{cell.tag} running normally, no unusual noise."),
            (9, Shift.AFTERNOON, "maintenance", f"{cell.tag} lubrication round done."),
            (2, Shift.NIGHT, "handover", f"{cell.tag} stable through the night."),
        ]
        if cell.tag == P02:
            notes += [
                (3, Shift.MORNING, "observation", "P-02 slight humming from the drive-end bearing housing."),
                (
                    1,
                    Shift.AFTERNOON,
                    "observation",
                    "P-02 bearing housing warm to the touch; vibration reading 3.9 mm/s on the handheld.",
                ),
            ]
        for days, shift, category, text in notes:
            _, new = LogbookEntry.objects.get_or_create(
                cell=cell,
                text=text,
                defaults={
                    "time": now - timedelta(days=days, hours=2),
                    "author": "Tom Baker" if category == "observation" else "Marta Silva",
                    "shift": shift,
                    "category": category,
                },
            )
            created += new
    return created


def _shifts(line: Line | None) -> int:
    today = timezone.localdate()
    created = 0
    for offset in range(-1, 7):
        day = today + timedelta(days=offset)
        for index, (shift, hour) in enumerate(SHIFT_HOURS.items()):
            starts = timezone.make_aware(datetime.combine(day, time(hour)))
            for name, role, skills in (
                TECHNICIANS[(2 * index + offset) % 6],
                TECHNICIANS[(2 * index + offset + 1) % 6],
            ):
                _, new = ShiftAssignment.objects.get_or_create(
                    date=day,
                    shift=shift,
                    technician=name,
                    defaults={
                        "line": line,
                        "role": role,
                        "skills": skills,
                        "starts_at": starts,
                        "ends_at": starts + timedelta(hours=8),
                    },
                )
                created += new
    return created


def _production(cells: list[Cell], days: int = 90) -> int:
    today = timezone.localdate()
    existing = set(
        ProductionRecord.objects.filter(cell__in=cells, date__gte=today - timedelta(days=days)).values_list(
            "cell_id", "date", "shift"
        )
    )
    rows = []
    for cell in cells:
        rng = random.Random(f"aria-{cell.tag}")  # deterministic per cell
        for offset in range(days, 0, -1):
            day = today - timedelta(days=offset)
            for shift in SHIFT_HOURS:
                run = 480 - rng.choice([0, 0, 10, 20, 35, 60])
                ideal = 30.0
                total = int(run * 60 / ideal * rng.uniform(0.86, 0.97))
                good = int(total * rng.uniform(0.97, 0.995))
                if (cell.pk, day, shift) in existing:
                    continue
                rows.append(
                    ProductionRecord(
                        cell=cell,
                        date=day,
                        shift=shift,
                        planned_time_min=480,
                        run_time_min=run,
                        ideal_cycle_time_s=ideal,
                        total_count=total,
                        good_count=good,
                    )
                )
    ProductionRecord.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def seed(stdout) -> None:
    with transaction.atomic():
        p02 = _p02()
        cells = list(Cell.objects.select_related("line").order_by("tag"))
        kb_created = 0
        for cell in cells:
            _, created = EquipmentKB.objects.get_or_create(cell=cell, defaults={"data": kb_for(cell.equipment_type)})
            kb_created += created
        failures = sum(_failure(cell, *row) for cell in cells for row in HISTORY.get(cell.tag, []))
        logbook = _logbook(cells)
        shifts = _shifts(p02.line)
        production = _production(cells)
        codes = seed_failure_codes(FailureCode)
    stdout.write(
        f"workorders: {len(cells)} cells, {kb_created} KB, {failures} failures, {logbook} logbook entries, "
        f"{shifts} shift assignments, {production} production records, {codes} failure codes created\n"
    )
