"""The executor: walks a running plan's ready steps, every transition committed before the next.

Per step: capability still registered → the plan OWNER holds its scopes → the gate
(`gate_decision(autonomy, tier)`) runs it or asks a human (Interaction, plan paused) → the step
is claimed with a conditional UPDATE (pending → running WHERE status = 'pending' AND the plan is
running), which also stores a fresh idempotency key for the attempt → the capability runs,
outside any transaction, with that key in `ctx.extra` → the outcome is written guarded by the
same key. One commit per step: step N's outcome and step N+1's claim share a transaction, and it
commits before step N+1's handler runs. Read steps that are ready together run as one batch
(`read_batch.py`: claimed in one statement, settled in one; a read has no side effect to repeat).

The claim also takes the work lease `plan_step:<id>` (core.leases, committed with the claim),
heartbeated while the handler runs and released with the outcome. A worker killed after a claim
leaves the step `running` with a lease nobody renews: once it is free (dead pid on this host, or
ARIA_LEASE_TTL_SECONDS on any host) the sweeper re-drives the plan (orchestrator/reapers.py) and
the next pass takes the step over with the SAME key, so a capability that honours the key applies
its side effect at most once; a step whose holder is alive and renewing is never taken over
before the outer bound ARIA_PLAN_STEP_LEASE_SECONDS (then beat `orchestrator.poll_jobs` seizes
it as hung). A human's pause or cancel always wins a race with the executor.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from core.access import has_scopes
from core.capabilities import CapabilityContext, CapabilityResult, Tier, dispatch, registry
from core.errors import Conflict
from core.leases import (
    Lease,
    lease_acquire,
    lease_release,
    lease_seize,
    lease_ttl,
    leases_heartbeat,
    leases_release,
    leases_seize,
)
from orchestrator.choices import STEP_CLOSED, STEP_SETTLED, InteractionStatus, PlanStatus, StepStatus, gate_decision
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.guidance import allowed_cells, guided, outside_guidance
from orchestrator.services.interactions import ask_confirm, ask_permission, gate_evidence
from orchestrator.services.plan_outcome import plan_outcome
from orchestrator.services.plans import plan_transition, plan_updated
from orchestrator.services.read_batch import BATCH_LIMIT, batchable, claim_batch, record_batch
from orchestrator.services.step_moves import block_dependents, blocked_steps, stopped_roots

logger = logging.getLogger(__name__)
IN_FLIGHT = (StepStatus.RUNNING, StepStatus.WAITING_JOB, StepStatus.WAITING_INTERACTION)


def step_lease() -> timedelta:
    return timedelta(seconds=getattr(settings, "ARIA_PLAN_STEP_LEASE_SECONDS", 300))


def step_lease_key(step_id: int) -> str:
    return f"plan_step:{step_id}"


def plan_start(*, plan: Plan, actor: Any) -> Plan:
    """approved → running (or resume a paused plan with nothing left to answer), then enqueue."""
    with transaction.atomic():
        # Checked on the locked row: the executor may have opened an ask (and paused) since `plan` was read.
        status = Plan.objects.select_for_update().values_list("status", flat=True).get(pk=plan.pk)
        if status == PlanStatus.PAUSED and plan.interactions.filter(status=InteractionStatus.OPEN).exists():
            raise Conflict(f"Plan {plan.pk} is waiting for an answer.", allowed=[PlanStatus.CANCELLED], status=status)
        plan = plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=actor)
        enqueue_execution(plan.pk)
    return plan


def ready_steps(steps: list[PlanStep]) -> list[PlanStep]:
    """Pending steps whose dependencies are settled, in order (none depends on another); never one
    built on a stopped step, through however many steps (step_moves.py)."""
    status, stopped = {s.order: s.status for s in steps}, stopped_roots(steps)
    return [
        s
        for s in steps
        if s.status == StepStatus.PENDING
        and s.order not in stopped
        and all(status.get(d) in STEP_SETTLED for d in s.depends_on)
    ]


def _read_batch(plan: Plan, first: PlanStep, ready: list[PlanStep]) -> list[PlanStep]:
    """`first` and the other ready steps that may run with it as one read batch (read_batch.py)."""
    batch = [first]
    for step in ready[1:]:
        cap = registry.get(step.capability)
        if cap is not None and has_scopes(plan.owner, cap.scopes) and batchable(plan, step, cap):
            batch.append(step)
        if len(batch) == BATCH_LIMIT:
            break
    return batch


def _guarded_step_update(step_id: int, guard: dict[str, Any], plan_running: int | None = None, **fields: Any) -> bool:
    """`UPDATE step SET fields WHERE id AND guard [AND its plan is running]` — one statement.

    The hot path of every step (claim and outcome), so it is plain SQL: the ORM's UPDATE
    compilation cost more than the statement itself (bench/plan_steps.py). Values go through
    each field's own DB adaptation, so JSON and datetimes are stored exactly as the ORM would.
    """
    meta, qn = PlanStep._meta, connection.ops.quote_name
    sets, params = [], []
    for name, value in fields.items():
        if name == "attempts" and value == "+1":
            sets.append(f"{qn('attempts')} = {qn('attempts')} + 1")
            continue
        column = meta.get_field(name)
        sets.append(f"{qn(column.column)} = %s")
        params.append(column.get_db_prep_save(value, connection))
    where = [f"{qn('id')} = %s"] + [f"{qn(meta.get_field(k).column)} = %s" for k in guard]
    params += [step_id, *guard.values()]
    if plan_running is not None:
        where.append(f"EXISTS (SELECT 1 FROM {qn(Plan._meta.db_table)} WHERE {qn('id')} = %s AND {qn('status')} = %s)")
        params += [plan_running, PlanStatus.RUNNING.value]
    sql = f"UPDATE {qn(meta.db_table)} SET {', '.join(sets)} WHERE {' AND '.join(where)}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount == 1


def _claim(plan: Plan, step: PlanStep) -> bool:
    """pending → running for exactly one worker; a new attempt gets a new idempotency key."""
    key = f"plan{plan.pk}-step{step.pk}-{uuid.uuid4().hex[:12]}"
    now = timezone.now()
    # No event: `running` is transient; the outcome (done / waiting / failed) is published next.
    won = _guarded_step_update(
        step.pk, {"status": StepStatus.PENDING.value}, plan_running=plan.pk,
        status=StepStatus.RUNNING.value, attempts="+1", idempotency_key=key, claimed_at=now, updated_at=now,
    )  # fmt: skip
    if won:
        step.status, step.idempotency_key, step.claimed_at = StepStatus.RUNNING, key, now
        step.attempts += 1
        _lease_claimed([step])
    return won


def _lease_claimed(steps: list[PlanStep]) -> None:
    """Claimed steps take their work lease in the claim's transaction: never running unleased."""
    leases = leases_seize([step_lease_key(step.pk) for step in steps], ttl_seconds=lease_ttl())
    for step, lease in zip(steps, leases, strict=True):
        step.lease = lease


def _take_over(plan: Plan, step: PlanStep, stale_before) -> Lease | None:
    """A step left running whose holder stopped renewing its lease (died or hung, on any host), or
    that ran past the outer bound: take it over, keeping the attempt's key. None while a live
    holder renews it (or another worker took it first)."""
    key, ttl = step_lease_key(step.pk), lease_ttl()
    overdue = step.claimed_at is not None and step.claimed_at <= stale_before
    lease = lease_seize(key, ttl_seconds=ttl) if overdue else lease_acquire(key, ttl_seconds=ttl)
    if lease is None:
        return None
    now = timezone.now()
    won = PlanStep.objects.filter(pk=step.pk, status=StepStatus.RUNNING, claimed_at=step.claimed_at).update(
        claimed_at=now
    )
    if not won:
        lease_release(lease)
        return None
    step.claimed_at = now
    return lease


def _write_outcome(plan: Plan, step: PlanStep, **fields: Any) -> bool:
    """Write a running step's outcome, guarded by its attempt key (a stale worker writes nothing)."""
    fields["updated_at"] = timezone.now()
    with transaction.atomic(savepoint=False):
        won = _guarded_step_update(
            step.pk, {"status": StepStatus.RUNNING.value, "idempotency_key": step.idempotency_key}, **fields
        )
        if won:
            for name, value in fields.items():
                setattr(step, name, value)
            plan_updated(plan, step)
    return bool(won)


def gate_passes(gate: dict[str, Any] | None, result: Any) -> tuple[bool, Any]:
    """Evaluate `{field, op, threshold}` on a result; a missing or non-numeric value fails."""
    if not gate:
        return True, None
    value: Any = result
    for part in gate["field"].split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False, value
    threshold = gate["threshold"]
    ok = {
        "gt": value > threshold,
        "gte": value >= threshold,
        "lt": value < threshold,
        "lte": value <= threshold,
        "eq": value == threshold,
        "ne": value != threshold,
    }[gate["op"]]
    return ok, value


def settle_result(plan: Plan, step: PlanStep, result: Any, **extra: Any) -> str:
    """A step's result arrived (inline or from a job): done, or a confirm ask when its gate fails."""
    passed, value = gate_passes(step.quality_gate, result)
    if passed:
        _write_outcome(plan, step, status=StepStatus.DONE, result=result, error="", **extra)
        return "done"
    with transaction.atomic(savepoint=False):
        if _write_outcome(plan, step, status=StepStatus.WAITING_INTERACTION, result=result, **extra):
            ask_confirm(plan, step, evidence=gate_evidence(step, value))
    return "asked"


def _fail(plan: Plan, step: PlanStep, message: str, *, claimed: bool) -> None:
    with transaction.atomic(savepoint=False):
        if claimed:
            _write_outcome(plan, step, status=StepStatus.FAILED, error=message)
        else:
            PlanStep.objects.filter(pk=step.pk, status=StepStatus.PENDING).update(
                status=StepStatus.FAILED, error=message, updated_at=timezone.now()
            )
            step.status, step.error = StepStatus.FAILED, message
            plan_updated(plan, step)


def _skip(plan: Plan, step: PlanStep, reason: str) -> None:
    """A pending step the plan's guidance rules out: skipped with the reason, never run."""
    if PlanStep.objects.filter(pk=step.pk, status=StepStatus.PENDING).update(
        status=StepStatus.SKIPPED, error=reason, updated_at=timezone.now()
    ):
        step.status, step.error = StepStatus.SKIPPED, reason
        plan_updated(plan, step)


def _dispatch(plan: Plan, step: PlanStep) -> CapabilityResult:
    """Run a claimed step's capability as the plan owner, outside any transaction."""
    extra = {"idempotency_key": step.idempotency_key, "plan_id": plan.pk, "step_id": step.pk}
    if Tier.parse(step.tier) == Tier.GATED:  # the handler records who released it (separation of duties)
        approval = (
            Interaction.objects.filter(step=step, status=InteractionStatus.ANSWERED)
            .exclude(required_scope="")
            .select_related("answered_by")
            .order_by("-answered_at")
            .first()
        )
        extra["approved_by"] = approval.answered_by if approval else None
    ctx = CapabilityContext(user=plan.owner, agent="orchestrator", extra=extra)
    return dispatch(step.capability, step.inputs, ctx=ctx)


def _record(plan: Plan, step: PlanStep, result: CapabilityResult) -> str:
    """Write a dispatched step's outcome (in the caller's transaction)."""
    if result.is_error:
        _fail(plan, step, result.message, claimed=True)
        return "failed"
    if result.job is not None:
        _write_outcome(
            plan,
            step,
            status=StepStatus.WAITING_JOB,
            result=result.content,
            job_kind=result.job.kind,
            job_ref=result.job.ref,
        )
        return "parked"
    return settle_result(plan, step, result.content)


def _end(plan: Plan, status: str, reason: str = "", *, outcome: str = "") -> None:
    """Finish the plan unless someone else moved it first (a cancel or pause wins the race)."""
    try:
        with transaction.atomic():
            plan_transition(plan=plan, to_status=status, actor=None, reason=reason, outcome=outcome)
    except Conflict:
        plan.refresh_from_db(fields=["status"])


def _next_move(plan: Plan, steps: list[PlanStep]) -> tuple[str, PlanStep | list[PlanStep] | None]:
    """Finish or fail the plan, stop (paused / parked), ask at the gate, or claim the next step (or
    read batch: "run_batch" with the steps this worker won)."""
    if plan.status != PlanStatus.RUNNING:
        return "stop", None
    failed = next((s for s in steps if s.status == StepStatus.FAILED), None)
    if failed is not None:
        _end(plan, PlanStatus.FAILED, f"Step {failed.order} ({failed.capability}) failed: {failed.error}")
        return "stop", None
    if blocked_steps(steps):  # built on a stopped step: skipped with the reason, never run
        block_dependents(plan, steps, None)
        return "again", None
    if all(s.status in STEP_CLOSED for s in steps):
        _end(plan, PlanStatus.COMPLETED, outcome=plan_outcome(steps))
        return "stop", None
    ready = ready_steps(steps)
    step = ready[0] if ready else None
    if step is None:
        if not any(s.status in IN_FLIGHT for s in steps):
            _end(plan, PlanStatus.FAILED, "No step can run: dependencies cannot be met.")
        return "stop", None  # paused on a human, or parked on jobs until a poll
    cap = registry.get(step.capability)
    if cap is None:
        _fail(plan, step, f"Capability {step.capability!r} is no longer registered.", claimed=False)
        return "again", None
    if not has_scopes(plan.owner, cap.scopes):
        _fail(plan, step, f"Plan owner lacks scope {', '.join(cap.scopes)} for {cap.name}.", claimed=False)
        return "again", None
    # the plan's cell/line guidance, as read at the start of this pass (guidance given later starts a pass)
    allowed = allowed_cells(plan) if guided(plan.constraints) else None
    if why := outside_guidance(plan, step, allowed):
        _skip(plan, step, why)
        return "again", None
    if not step.gate_cleared and gate_decision(plan.autonomy, step.tier) == "ask":
        plan.refresh_from_db(fields=["status", "autonomy"])  # someone may have paused or cancelled it
        if plan.status == PlanStatus.RUNNING:
            ask_permission(plan, step)
        return "stop", None
    batch = _read_batch(plan, step, ready) if batchable(plan, step, cap) else [step]
    if allowed is not None:  # the others are skipped when their turn comes
        batch = [s for s in batch if s is step or not outside_guidance(plan, s, allowed)]
    if len(batch) > 1:
        won = claim_batch(plan, batch)
        _lease_claimed(won)
        return ("run_batch", won) if won else ("lost", None)
    return ("run", step) if _claim(plan, step) else ("lost", None)


def plan_execute(plan_id: int, *, stale_after: timedelta | None = None) -> Plan:
    """Walk the plan until it finishes, pauses on a human, or parks on jobs. Safe to run twice."""
    plan = Plan.objects.select_related("owner").get(pk=plan_id)
    if plan.status != PlanStatus.RUNNING:
        return plan
    stale_before = timezone.now() - (step_lease() if stale_after is None else stale_after)
    steps = list(plan.steps.all())
    for step in steps:
        if step.status == StepStatus.RUNNING and (lease := _take_over(plan, step, stale_before)):
            logger.warning("Plan %s: resuming step %s left running by a dead or hung worker", plan.pk, step.pk)
            with leases_heartbeat([lease]):
                result = _dispatch(plan, step)
            with transaction.atomic():
                _record(plan, step, result)
                lease_release(lease)
    dispatched: list[tuple[PlanStep, CapabilityResult]] = []
    held: list[Lease] = []
    while True:
        # One commit per step (or read batch): the previous outcome and the next claim together,
        # both durable before the next handler runs.
        with transaction.atomic():
            for done in record_batch(plan, dispatched) if len(dispatched) > 1 else dispatched:
                _record(plan, *done)
            leases_release(held)
            dispatched = []
            move, step = _next_move(plan, steps)
            claimed = [step] if move == "run" else step if move == "run_batch" else []
            held = [s.lease for s in claimed if getattr(s, "lease", None)]
        if move == "stop":
            plan.refresh_from_db(fields=["status", "error"])
            return plan
        if move == "lost":  # another worker took it, or the plan stopped running: look again
            plan.refresh_from_db(fields=["status"])
            if plan.status != PlanStatus.RUNNING:
                return plan
            steps = list(plan.steps.all())
        elif move == "run":
            with leases_heartbeat(held):
                dispatched = [(step, _dispatch(plan, step))]
        elif move == "run_batch":
            with leases_heartbeat(held):
                dispatched = [(each, _dispatch(plan, each)) for each in step]


def plans_needing_attention(limit: int = 100) -> list[int]:
    """Running plans the beat should look at: a parked job, a step whose worker's lease ran out,
    or ready work that nobody has touched for a lease (its execute message was lost with a worker)."""
    stale_before = timezone.now() - step_lease()
    parked_or_abandoned = Plan.objects.filter(status=PlanStatus.RUNNING).filter(
        Q(steps__status=StepStatus.WAITING_JOB)
        | Q(steps__status=StepStatus.RUNNING, steps__claimed_at__lte=stale_before)
    )
    idle = (
        Plan.objects.filter(status=PlanStatus.RUNNING, updated_at__lte=stale_before)
        .annotate(last_step_change=Max("steps__updated_at"))
        .filter(last_step_change__lte=stale_before, steps__status=StepStatus.PENDING)
    )
    ids = set(parked_or_abandoned.values_list("pk", flat=True)) | set(idle.values_list("pk", flat=True))
    return sorted(ids)[:limit]
