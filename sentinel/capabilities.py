"""What sentinel offers plans: a gated change of a signal's alarm limits (management of change), and
a read of alarm performance (ISA-18.2) for agents, plans and MCP.

`gated` is never projected to agents or MCP: the capability runs only as a plan step, which the
executor always stops at for a DIFFERENT human holding the approver scope to release.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from sentinel.performance import alarm_performance, performance_window
from sentinel.services.alarms import has_visible_character
from sentinel.services.limits import LIMIT_FIELDS, signal_for_change, signal_limits_change


class ChangeSignalLimitsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    signal_id: int | None = Field(default=None, description="The signal's id…")
    cell_tag: str | None = Field(default=None, max_length=32, description="…or its cell's tag (e.g. P-02)…")
    signal_key: str | None = Field(default=None, max_length=64, description="…and its key (e.g. vibration_mm_s).")
    low_alert: float | None = Field(default=None, description="New low alert limit (null = keep).", allow_inf_nan=False)
    alert: float | None = Field(default=None, description="New alert limit (null = keep).", allow_inf_nan=False)
    high_alert: float | None = Field(
        default=None, description="New high alert limit (null = keep).", allow_inf_nan=False
    )
    trip: float | None = Field(default=None, description="New trip limit (null = keep).", allow_inf_nan=False)
    deadband: float | None = Field(default=None, description="New deadband, ≥ 0 (null = keep).", allow_inf_nan=False)
    on_delay_seconds: int | None = Field(default=None, ge=0, le=86_400, description="New on-delay (null = keep).")
    reason: str = Field(min_length=1, max_length=500, description="Why the limits change (management of change).")

    @field_validator("reason")
    @classmethod
    def _reason_has_words(cls, value: str) -> str:
        value = value.strip()
        if not has_visible_character(value):
            raise ValueError("a limit change needs a reason")
        return value

    @model_validator(mode="after")
    def _names_a_signal_and_a_change(self) -> ChangeSignalLimitsInput:
        if self.signal_id is None and not (self.cell_tag and self.signal_key):
            raise ValueError("give signal_id, or cell_tag and signal_key")
        if self.signal_id is not None and (self.cell_tag or self.signal_key):
            raise ValueError("give signal_id or cell_tag + signal_key, not both")
        if all(getattr(self, name) is None for name in LIMIT_FIELDS):
            raise ValueError(f"give at least one of {', '.join(LIMIT_FIELDS)}")
        return self

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in LIMIT_FIELDS if getattr(self, name) is not None}


@capability(
    "sentinel.change_signal_limits",
    description=(
        "Change a signal's alarm limits (low_alert, alert, high_alert, trip, deadband, on_delay_seconds) with a "
        "reason. Gated: an approver other than the requester releases it; the signal is then re-evaluated."
    ),
    input=ChangeSignalLimitsInput,
    tier=Tier.GATED,
    scopes=(OPERATOR,),
)
def change_signal_limits(ctx: CapabilityContext, params: ChangeSignalLimitsInput) -> dict[str, Any]:
    signal = signal_for_change(signal_id=params.signal_id, cell_tag=params.cell_tag, signal_key=params.signal_key)
    change = signal_limits_change(
        signal=signal,
        changes=params.changes(),
        reason=params.reason,
        actor=ctx.user,
        # The executor passes the step's attempt key, its ids and who approved the gated step.
        approved_by=ctx.extra.get("approved_by"),
        idempotency_key=str(ctx.extra.get("idempotency_key") or ""),
        context={"plan_id": ctx.extra.get("plan_id"), "step_id": ctx.extra.get("step_id")},
    )
    return change.as_dict()


# --- alarm performance (ISA-18.2): a read for agents, plans and MCP --------------------------------


class AlarmPerformanceInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hours: float = Field(default=24, gt=0, le=744, description="Window: the last N hours (at most 31 days).")
    line_id: int | None = Field(default=None, ge=1, description="Operator position: one line (default: the site).")


_AGENT_LISTED = 10


@capability(
    "sentinel.alarm_performance",
    description=(
        "Alarm performance over the last N hours for the site or one line (ISA-18.2 / EEMUA 191): alarms per "
        "10 min against the ~1 target and the 10 flood line, floods (start/end/peak), the top 10 bad actors with "
        "their share and a tuning suggestion (deadband, on-delay or limit, with evidence), chattering, fleeting, "
        "standing/stale, shelved and out-of-service alarms, priority mix."
    ),
    input=AlarmPerformanceInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def alarm_performance_read(ctx: CapabilityContext, params: AlarmPerformanceInput) -> dict[str, Any]:
    report = alarm_performance(performance_window(hours=params.hours, line_id=params.line_id))
    # The per-10-minute buckets stay on the page; an agent gets the figures and the first items of each list.
    report["rate"] = {k: v for k, v in report["rate"].items() if k != "buckets"}
    for name in ("chattering", "fleeting", "standing", "stale", "shelved", "out_of_service"):
        report[name] = {"count": report[name]["count"], "items": report[name]["items"][:_AGENT_LISTED]}
    return report
