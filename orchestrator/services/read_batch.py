"""Ready read steps run as one batch: claimed in one statement, their outcomes and events written
together in the next step transaction.

What "every transition is committed before the next" protects is a side effect: a step's effect
must be durable before the next step acts on the world, and a retried step must not apply it
twice. A read has no side effect, so a run of reads that are ready together (none depends on
another) may be claimed together and settled together; that turns a long run of cheap reads from
one claim + one outcome + one event + one commit per step into one of each per batch
(bench/plan_steps.py). Each step still gets its own attempt key, its own transitions and its own
`plan_updated` event (private copies for the owner and the admins, whose ids are read once per
batch). A worker killed mid-batch leaves the claimed steps `running`; the stale-lease pass re-runs
each one with its key (harmless: reads).

A step qualifies when it and its capability are read tier, the capability returns no job, the
step has no quality gate, and the gate runs it without asking.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection
from django.utils import timezone

from core.capabilities import Capability, CapabilityResult, Tier
from orchestrator.choices import PlanStatus, StepStatus, gate_decision
from orchestrator.models import Plan, PlanStep
from orchestrator.services.plans import plans_updated

BATCH_LIMIT = 50


def batchable(plan: Plan, step: PlanStep, cap: Capability) -> bool:
    return (
        Tier.parse(step.tier) == Tier.READ
        and cap.tier == Tier.READ
        and not cap.returns_job
        and not step.quality_gate
        and (step.gate_cleared or gate_decision(plan.autonomy, step.tier) == "run")
    )


def _prep(name: str, value: Any) -> Any:
    return PlanStep._meta.get_field(name).get_db_prep_save(value, connection)


def claim_batch(plan: Plan, steps: list[PlanStep]) -> list[PlanStep]:
    """pending → running for each step no other worker has taken, while the plan runs; each gets
    its own attempt key (`plan{p}-step{s}-{batch}`). Returns the steps this worker won."""
    suffix, now = uuid.uuid4().hex[:12], timezone.now()
    qn, table = connection.ops.quote_name, PlanStep._meta.db_table
    key = f"'plan' || CAST({qn('plan_id')} AS TEXT) || '-step' || CAST({qn('id')} AS TEXT) || '-' || %s"
    sql = (
        f"UPDATE {qn(table)} SET {qn('status')} = %s, {qn('attempts')} = {qn('attempts')} + 1, "
        f"{qn('idempotency_key')} = {key}, {qn('claimed_at')} = %s, {qn('updated_at')} = %s "
        f"WHERE {qn('id')} IN ({', '.join(['%s'] * len(steps))}) AND {qn('status')} = %s "
        f"AND EXISTS (SELECT 1 FROM {qn(Plan._meta.db_table)} WHERE {qn('id')} = %s AND {qn('status')} = %s) "
        f"RETURNING {qn('id')}"
    )
    params = [StepStatus.RUNNING.value, suffix, _prep("claimed_at", now), _prep("updated_at", now)]
    params += [s.pk for s in steps] + [StepStatus.PENDING.value, plan.pk, PlanStatus.RUNNING.value]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        won = {row[0] for row in cursor.fetchall()}
    for step in steps:
        if step.pk in won:
            step.status, step.claimed_at = StepStatus.RUNNING, now
            step.idempotency_key = f"plan{plan.pk}-step{step.pk}-{suffix}"
            step.attempts += 1
    return [s for s in steps if s.pk in won]


def record_batch(
    plan: Plan, dispatched: list[tuple[PlanStep, CapabilityResult]]
) -> list[tuple[PlanStep, CapabilityResult]]:
    """Settle the batch's plain results as done — one UPDATE guarded by each attempt's key, one read
    of the admin ids and one event INSERT (the private copies) — in the caller's transaction.
    Returns the rest (errors) to record one by one."""
    plain = [(s, r) for s, r in dispatched if not r.is_error and r.job is None]
    rest = [(s, r) for s, r in dispatched if r.is_error or r.job is not None]
    if not plain:
        return rest
    now, qn = timezone.now(), connection.ops.quote_name
    cases, params = [], []
    for step, result in plain:
        cases.append("WHEN %s THEN %s")
        params += [step.pk, _prep("result", result.content)]
    sql = (
        f"UPDATE {qn(PlanStep._meta.db_table)} SET {qn('status')} = %s, {qn('error')} = '', {qn('updated_at')} = %s, "
        f"{qn('result')} = CASE {qn('id')} {' '.join(cases)} END "
        f"WHERE {qn('status')} = %s AND {qn('idempotency_key')} IN ({', '.join(['%s'] * len(plain))}) "
        f"RETURNING {qn('id')}"
    )
    params = [StepStatus.DONE.value, _prep("updated_at", now), *params, StepStatus.RUNNING.value]
    params += [step.idempotency_key for step, _ in plain]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        won = {row[0] for row in cursor.fetchall()}
    settled = [step for step, _ in plain if step.pk in won]  # a stale worker's steps are not written
    for step, result in plain:
        if step.pk in won:
            step.status, step.result, step.error, step.updated_at = StepStatus.DONE, result.content, "", now
    plans_updated((plan, step) for step in settled)  # one admin read and one INSERT for the batch
    return rest
