"""Small capabilities the orchestrator tests plan with: one per tier, a job, an idempotent effect.

Effects and job states live in durable rows (audit records) so a real Celery worker process
sees the same state as the test.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from core.access import APPROVER, OPERATOR
from core.audit import audit_record
from core.capabilities import CapabilityContext, JobHandle, Tier, capability, job_resolver
from core.models import AuditRecord

CALLS: list[str] = []  # handler invocations in this process (crash/idempotency tests)


class ValueIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    n: int = 1


class EffectIn(BaseModel):
    label: str


class ScoreIn(BaseModel):
    score: float


class JobIn(BaseModel):
    ref: str


class NoIn(BaseModel):
    pass


@capability("otest.read_value", description="Read a value.", input=ValueIn, tier=Tier.READ, scopes=(OPERATOR,))
def ot_read_value(ctx: CapabilityContext, params: ValueIn) -> dict[str, Any]:
    CALLS.append("read_value")
    return {"key": params.key, "value": params.n}


@capability("otest.note", description="A safe note.", input=EffectIn, tier=Tier.SAFE, scopes=(OPERATOR,))
def ot_note(ctx: CapabilityContext, params: EffectIn) -> dict[str, Any]:
    CALLS.append("note")
    return {"noted": params.label}


def effect_count(label: str) -> int:
    return AuditRecord.objects.filter(action="otest.effect", details__label=label).count()


@capability("otest.write_effect", description="A mutation.", input=EffectIn, tier=Tier.MUTATE, scopes=(OPERATOR,))
def ot_write_effect(ctx: CapabilityContext, params: EffectIn) -> dict[str, Any]:
    """Applies its effect once per idempotency key (the contract a mutating capability honours)."""
    CALLS.append("write_effect")
    key = ctx.extra.get("idempotency_key", "")
    previous = AuditRecord.objects.filter(action="otest.effect", target_id=key).first() if key else None
    if previous is None:
        previous = audit_record(
            actor=ctx.user, action="otest.effect", target_type="otest", target_id=key, details={"label": params.label}
        )
    return {"effect_id": previous.pk, "label": params.label}


@capability("otest.release", description="A gated release.", input=EffectIn, tier=Tier.GATED, scopes=(OPERATOR,))
def ot_release(ctx: CapabilityContext, params: EffectIn) -> dict[str, Any]:
    CALLS.append("release")
    return {"released": params.label}


@capability("otest.approver_only", description="Needs approver.", input=NoIn, tier=Tier.READ, scopes=(APPROVER,))
def ot_approver_only(ctx: CapabilityContext, params: NoIn) -> dict[str, Any]:
    CALLS.append("approver_only")
    return {}


@capability("otest.score", description="A scored result.", input=ScoreIn, tier=Tier.READ, scopes=(OPERATOR,))
def ot_score(ctx: CapabilityContext, params: ScoreIn) -> dict[str, Any]:
    return {"quality": {"score": params.score}}


@capability(
    "otest.start_job",
    description="Starts async work.",
    input=JobIn,
    tier=Tier.SAFE,
    scopes=(OPERATOR,),
    returns_job=True,
)
def ot_start_job(ctx: CapabilityContext, params: JobIn) -> JobHandle:
    CALLS.append("start_job")
    return JobHandle("otest_job", params.ref)


def finish_job(ref: str, state: str = "done", **details: Any) -> None:
    audit_record(actor=None, action=f"otest.job_{state}", target_type="otest_job", target_id=ref, details=details)


@job_resolver("otest_job")
def ot_job_status(ref: str) -> tuple[str, dict[str, Any]]:
    row = AuditRecord.objects.filter(target_type="otest_job", target_id=ref).order_by("-id").first()
    if row is None:
        return "pending", {}
    return ("done" if row.action == "otest.job_done" else "failed"), dict(row.details)


class SlowEffectIn(BaseModel):
    label: str
    seconds: float = 0.0


@capability(
    "otest.slow_effect",
    description="A mutation that lingers after committing its effect.",
    input=SlowEffectIn,
    tier=Tier.MUTATE,
    scopes=(OPERATOR,),
)
def ot_slow_effect(ctx: CapabilityContext, params: SlowEffectIn) -> dict[str, Any]:
    """Commits its (idempotent) effect, then sleeps: a worker killed now dies between effect and done."""
    import time

    result = ot_write_effect(ctx, EffectIn(label=params.label))
    time.sleep(params.seconds)
    return result
