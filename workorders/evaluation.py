"""Diagnosis you can measure: play the fault library (sentinel/fault_scenarios.py) through the real
pipeline — ingest → alarm → work order → Investigator — on a scratch plant, and score each RCA
against the ground truth: failure mode, evidence cited (the right signals), similar past failure.

Each case gets its own cell (a neutral tag, pump or conveyor signals, a KB listing every failure
mode, and confirmed past failures: usually one of the true mode plus distractors), so no case
sees another's data. The samples are fed as the plant would send them — a history batch, then one
batch per step — and the feed stops once the cell has a work order: the Investigator sees what was
known when the alarm came. The scratch plant is deleted afterwards unless `keep_plant`.

While a run lasts, this process runs its tasks in-process (Celery eager) with the chosen engine, so
the investigation the alarm dispatches is the one scored. Run it where no live simulator feeds the
same database (it would feed the scratch cells too).
"""

from __future__ import annotations

import contextlib
import copy
import random
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.agents.engines.base import get_engine, reset_engines
from sentinel.fault_scenarios import FAULT_SCENARIOS, PUMP, FaultCase, case_set, equipment_for, generate
from sentinel.models import Cell, Line, SignalDefinition, Site
from sentinel.services import samples_ingest
from workorders.choices import FailureVerification, WorkOrderStatus
from workorders.demo_kb import kb_for
from workorders.models import EquipmentKB, FailureHistory, RcaEvaluation, WorkOrder
from workorders.services.investigation import work_order_investigate

NO_ALARM = "no_alarm"
ALIASES = {
    "none": "no_fault",
    "normal": "no_fault",
    "no_fault_found": "no_fault",
    "nuisance_alarm": "no_fault",
    "false_alarm": "no_fault",
    "instrument_failure": "sensor_failure",
    "sensor_fault": "sensor_failure",
    "instrument_drift": "sensor_drift",
    "calibration_drift": "sensor_drift",
    "unbalance": "imbalance",
    "mechanical_seal_leak": "seal_leak",
    "bearing_failure": "bearing_wear",
    "bearing_damage": "bearing_wear",
}
# The KB's failure modes beyond the demo KB's, so any Investigator knows the slugs (DOMAIN.md).
EXTRA_MODES: dict[str, dict[str, Any]] = {
    "bearing_wear": {"signatures": ["overall and high-frequency vibration rising", "bearing temperature up"]},
    "cavitation": {"signatures": ["suction pressure low", "flow and discharge pressure unstable", "noisy vibration"]},
    "misalignment": {"signatures": ["2× running-speed band dominant", "coupling/bearing temperature up"]},
    "imbalance": {
        "signatures": ["1× running-speed band dominant", "steady", "temperatures normal"],
        "remedy": "Balance the rotor; clean deposits from the impeller or pulley.",
    },
    "seal_leak": {"signatures": ["discharge pressure slowly down", "flow slightly down", "vibration unchanged"]},
    "belt_slip": {
        "signatures": ["belt speed down or erratic", "motor current down while the load holds", "gearbox warm"],
        "remedy": "Re-tension the belt and clean the drive pulley lagging.",
    },
    "sensor_drift": {
        "signatures": ["one signal slowly diverges from physically coupled peers that agree with each other"],
        "remedy": "Check and recalibrate the transmitter against a reference.",
    },
    "sensor_failure": {
        "signatures": ["flatline (no variance)", "spikes or steps with implausible rate of change", "out of range"],
        "remedy": "Check the transmitter, its wiring and loop power; replace the sensor if faulty.",
    },
    "no_fault": {
        "signatures": ["every signal within its noise band; the alarm limit sits inside normal variation"],
        "remedy": "No repair: review the alarm limit, deadband or on-delay (alarm rationalisation).",
    },
}


@dataclass
class CaseOutcome:
    scenario: str
    variant: str
    seed: int
    noise_level: float
    equipment_type: str
    cell_tag: str
    work_order_id: int | None
    alarm_signal: str | None
    predicted: str
    mode_correct: bool
    evidence_expected: list[str]
    evidence_cited: list[str]
    evidence_correct: bool
    similar_expected: int | None
    similar_answer: str
    similar_correct: bool
    samples_fed: int
    confidence: float | None = None
    notes: list[str] = field(default_factory=list)


def normalise_mode(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", (text or "").strip().lower()).strip("_")
    return ALIASES.get(slug, slug) or "undetermined"


def predicted_mode(rca: dict[str, Any]) -> str:
    """The RCA's failure mode: its `failure_mode`, else the slug its root cause starts with."""
    mode = rca.get("failure_mode") or ""
    if not mode or mode == "unknown":  # lifecycle.failure_mode_from_rca reads only `a_b:` heads
        mode = str(rca.get("root_cause") or "").split(":", 1)[0]
    return normalise_mode(mode)


def cited_signals(rca: dict[str, Any], keys: list[str]) -> list[str]:
    """Signal keys the RCA cites: its signal_patterns, or named in its root cause or factors."""
    text = " ".join([str(rca.get("root_cause") or ""), *map(str, rca.get("contributing_factors") or [])])
    patterns = rca.get("signal_patterns") or {}
    return sorted(k for k in keys if k in patterns or re.search(rf"(?<![\w]){re.escape(k)}(?![\w])", text))


def similar_correct(answer: str, expected: int | None, seeded: list[int]) -> bool:
    """Right when the answer names the expected past failure (#id), or names none when none fits."""
    found = re.findall(r"#\s*(\d+)|\b(?:id|failure)\s*[:=]?\s*(\d+)\b", answer or "", flags=re.IGNORECASE)
    named = {int(a or b) for a, b in found if int(a or b) in seeded}
    return named == ({expected} if expected is not None else set())


# --- the scratch plant ---------------------------------------------------------------------------


def _scratch_cell(line: Line, case: FaultCase, tag: str) -> Cell:
    kind = "Pump" if case.equipment_type == PUMP else "Conveyor"
    cell = Cell.objects.create(
        line=line, tag=tag, name=f"{kind} {tag}", equipment_type=case.equipment_type, onboarding_complete=True
    )
    SignalDefinition.objects.bulk_create(
        SignalDefinition(
            cell=cell,
            key=s.key,
            display_name=s.display_name,
            unit=s.unit,
            low_alert=s.low_alert,
            alert=s.alert,
            high_alert=s.high_alert,
            trip=s.trip,
            deadband=s.deadband,
            on_delay_seconds=s.on_delay_seconds,
        )
        for s in case.signals
    )
    data = copy.deepcopy(kb_for(case.equipment_type))
    modes = data.setdefault("failure_modes", {})
    for mode, info in EXTRA_MODES.items():
        modes[mode] = {**info, **modes.get(mode, {})}
    EquipmentKB.objects.create(cell=cell, data=data)
    return cell


def _extreme(values: list[float]) -> float:
    start = values[0]
    return max(values, key=lambda v: abs(v - start))


def _pattern(case: FaultCase, rng: random.Random) -> dict[str, dict[str, float]]:
    return {
        k: {"peak": round(_extreme(case.series[k]) * rng.uniform(0.95, 1.05), 3), "duration_min": rng.randint(5, 60)}
        for k in case.evidence
    }


def _past_failures(cell: Cell, case: FaultCase, rng: random.Random) -> int | None:
    """Confirmed history: usually the true mode (on the same signals), plus two other modes."""
    now = timezone.now()
    modes = [
        m for m in FAULT_SCENARIOS if m not in ("no_fault", case.scenario) and case.equipment_type in equipment_for(m)
    ]
    rows: list[tuple[str, dict]] = []
    for mode in rng.sample(modes, 2):
        other = generate(mode, seed=rng.randint(1, 10**6), equipment=case.equipment_type)
        rows.append((mode, _pattern(other, rng)))
    has_true = case.scenario != "no_fault" and rng.random() >= 0.25
    if has_true:
        rows.append((case.scenario, _pattern(case, rng)))
    rng.shuffle(rows)
    expected = None
    for mode, pattern in rows:
        days = rng.randint(20, 400)
        failure = FailureHistory.objects.create(
            cell=cell,
            failure_time=now - timedelta(days=days),
            resolved_time=now - timedelta(days=days) + timedelta(hours=rng.randint(2, 8)),
            failure_mode=mode,
            root_cause=f"{mode}: confirmed by the technician at the repair.",
            signal_patterns=pattern,
            verification=FailureVerification.CONFIRMED,
            confirmed_failure_mode=mode,
            confirmed_at=now - timedelta(days=days - 1),
        )
        if mode == case.scenario:
            expected = failure.pk
    return expected


def _feed(cell: Cell, case: FaultCase) -> int:
    """History in one batch, then one batch per step, until the cell has a work order."""
    ids = dict(SignalDefinition.objects.filter(cell=cell).values_list("key", "pk"))
    end = timezone.now() - timedelta(seconds=1)
    times = [end - timedelta(seconds=case.step_seconds * (case.steps - 1 - i)) for i in range(case.steps)]
    batches = [range(case.prefix)] + [range(i, i + 1) for i in range(case.prefix, case.steps)]
    fed = 0
    for batch in batches:
        rows = [(ids[key], times[i], values[i]) for i in batch for key, values in case.series.items()]
        samples_ingest(samples=rows, now=times[batch[-1]] + timedelta(seconds=1))
        fed += len(rows)
        if WorkOrder.objects.filter(cell=cell).exists():
            break
    return fed


@contextlib.contextmanager
def pipeline_in_process(engine: str) -> Iterator[None]:
    """Tasks run here (eager) and agents use `engine`, for the length of the run."""
    previous = (current_app.conf.task_always_eager, settings.ARIA_ENGINE)
    current_app.conf.task_always_eager = True
    settings.ARIA_ENGINE = engine
    reset_engines()
    try:
        yield
    finally:
        current_app.conf.task_always_eager, settings.ARIA_ENGINE = previous
        reset_engines()


def evaluate_case(line: Line, case: FaultCase, tag: str, engine: str) -> CaseOutcome:
    rng = random.Random(f"history:{case.scenario}:{case.seed}")
    with transaction.atomic():
        cell = _scratch_cell(line, case, tag)
        expected_similar = _past_failures(cell, case, rng)
    seeded = list(FailureHistory.objects.filter(cell=cell).values_list("pk", flat=True))
    fed = _feed(cell, case)
    work_order = WorkOrder.objects.filter(cell=cell).order_by("pk").first()
    if work_order is not None and work_order.status == WorkOrderStatus.DETECTED:
        work_order_investigate(work_order_id=work_order.pk, engine=get_engine(engine))
    if work_order is not None:
        work_order.refresh_from_db()
    rca = (work_order.rca_details or {}) if work_order else {}
    if work_order is not None and not rca.get("root_cause"):
        rca = {**rca, "root_cause": work_order.rca_summary}
    predicted = predicted_mode(rca) if work_order else NO_ALARM
    keys = [s.key for s in case.signals]
    cited = cited_signals(rca, keys)
    answer = str(rca.get("similar_past_failure") or "")
    return CaseOutcome(
        scenario=case.scenario,
        variant=case.variant,
        seed=case.seed,
        noise_level=case.noise_level,
        equipment_type=case.equipment_type,
        cell_tag=tag,
        work_order_id=work_order.pk if work_order else None,
        alarm_signal=work_order.triggered_by_signal_def.key
        if work_order and work_order.triggered_by_signal_def
        else None,
        predicted=predicted,
        mode_correct=predicted == case.scenario,
        evidence_expected=list(case.evidence),
        evidence_cited=cited,
        evidence_correct=bool(work_order) and set(case.evidence) <= set(cited),
        similar_expected=expected_similar,
        similar_answer=answer,
        similar_correct=bool(work_order) and similar_correct(answer, expected_similar, seeded),
        samples_fed=fed,
        confidence=work_order.confidence if work_order else None,
    )


def confusion_matrix(outcomes: list[CaseOutcome]) -> dict[str, dict[str, int]]:
    counts = Counter((o.scenario, o.predicted) for o in outcomes)
    truths = [m for m in FAULT_SCENARIOS if any(o.scenario == m for o in outcomes)]
    return {t: {p: n for (tt, p), n in sorted(counts.items()) if tt == t} for t in truths}


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def rca_evaluation_run(
    *,
    engine: str = "fake",
    repeat: int = 1,
    held_out: bool = False,
    scenarios: list[str] | None = None,
    actor: Any = None,
    keep_plant: bool = False,
    on_case: Callable[[CaseOutcome], None] | None = None,
) -> RcaEvaluation:
    """Run every case of the (main or held-out) set, store and return the scored evaluation."""
    unknown = sorted(set(scenarios or []) - set(FAULT_SCENARIOS))
    if unknown:
        raise ValueError(f"Unknown scenario(s) {unknown}; known: {', '.join(FAULT_SCENARIOS)}")
    run = uuid.uuid4().hex[:6].upper()
    site = Site.objects.create(name=f"RCA evaluation {run}")
    line = Line.objects.create(site=site, name="Evaluation line")
    outcomes: list[CaseOutcome] = []
    try:
        with pipeline_in_process(engine):
            for index, (name, seed, noise) in enumerate(
                case_set(held_out=held_out, repeat=repeat, scenarios=scenarios)
            ):
                case = generate(name, seed=seed, noise_level=noise)
                outcome = evaluate_case(line, case, f"U{run}-{index:03d}", engine)
                outcomes.append(outcome)
                if on_case:
                    on_case(outcome)
    finally:
        if not keep_plant:
            site.delete()
    return RcaEvaluation.objects.create(
        engine=engine,
        held_out=held_out,
        repeat=repeat,
        cases=len(outcomes),
        failure_mode_accuracy=_share([o.mode_correct for o in outcomes]),
        evidence_accuracy=_share([o.evidence_correct for o in outcomes]),
        similar_failure_accuracy=_share([o.similar_correct for o in outcomes]),
        matrix=confusion_matrix(outcomes),
        results=[asdict(o) for o in outcomes],
        requested_by=actor,
    )


def evaluation_as_dict(evaluation: RcaEvaluation, *, with_results: bool = False) -> dict[str, Any]:
    data = {
        "id": evaluation.pk,
        "created_at": evaluation.created_at.isoformat(),
        "engine": evaluation.engine,
        "held_out": evaluation.held_out,
        "repeat": evaluation.repeat,
        "cases": evaluation.cases,
        "failure_mode_accuracy": evaluation.failure_mode_accuracy,
        "evidence_accuracy": evaluation.evidence_accuracy,
        "similar_failure_accuracy": evaluation.similar_failure_accuracy,
        "matrix": evaluation.matrix,
    }
    if with_results:
        data["results"] = evaluation.results
    return data
