"""Read capabilities for the shift: signed handover reports and the alarm-limit changes made in a
period (the management-of-change records `sentinel.change_signal_limits` leaves in the audit chain)."""

from datetime import datetime, timedelta
from typing import Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, model_validator

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from core.models import AuditRecord
from sentinel.models import SignalDefinition
from sentinel.services.limits import AUDIT_ACTION, AUDIT_TARGET
from workorders import selectors
from workorders.agents.handover import SECTION_TITLES, section_lines
from workorders.shift_selectors import handovers_search

WATCH_TITLE = dict(SECTION_TITLES)["watch_next_shift"]
HandoverStatusName = Literal["draft", "signed", "acknowledged"]


class LimitChangesInput(BaseModel):
    since: datetime | None = Field(default=None, description="ISO date-time; default 24 h ago.")
    until: datetime | None = Field(default=None, description="ISO date-time; default now.")
    cell_id: int | None = Field(default=None, description="Only this cell's signals.")
    limit: int = Field(default=20, ge=1, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> "LimitChangesInput":
        if self.since and self.until and self.until <= self.since:
            raise ValueError("until must be after since")
        return self


class HandoversInput(BaseModel):
    query: str = Field(default="", max_length=200, description="Words that must all appear (e.g. 'P-02 seal').")
    status: HandoverStatusName | None = Field(default=None, description="Default: signed and acknowledged.")
    limit: int = Field(default=5, ge=1, le=20)


def _fmt(value: Any) -> str:
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


@capability(
    "workorders.get_limit_changes",
    description="Alarm-limit changes (management of change) in a period, newest first: signal, before → after, "
    "reason, who requested and approved. Changes stay in force until changed again.",
    input=LimitChangesInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_limit_changes(ctx: CapabilityContext, params: LimitChangesInput) -> dict[str, Any]:
    until = params.until or timezone.now()
    since = params.since or until - timedelta(hours=24)
    qs = AuditRecord.objects.filter(action=AUDIT_ACTION, target_type=AUDIT_TARGET, created_at__gte=since)
    qs = qs.filter(created_at__lt=until)
    if params.cell_id is not None:
        cell = selectors.get_cell(params.cell_id)
        ids = [str(pk) for pk in SignalDefinition.objects.filter(cell=cell).values_list("pk", flat=True)]
        qs = qs.filter(target_id__in=ids)
    rows = []
    for record in qs.order_by("-created_at", "-id")[: params.limit]:
        d = record.details or {}
        before, after = d.get("before") or {}, d.get("after") or {}
        changed = [str(name) for name in d.get("changed") or []]
        rows.append(
            {
                "time": record.created_at.isoformat(),
                "signal_def_id": int(record.target_id) if record.target_id.isdigit() else None,
                "cell_tag": d.get("cell_tag", ""),
                "signal_key": d.get("signal_key", ""),
                "change": ", ".join(f"{n} {_fmt(before.get(n))} → {_fmt(after.get(n))}" for n in changed),
                "reason": str(d.get("reason", ""))[:500],
                "requested_by": d.get("requested_by") or record.actor_label,
                "approved_by": d.get("approved_by"),
            }
        )
    return {
        "since": since.isoformat(),
        "until": until.isoformat(),
        "changes": rows,
        "summary": f"{len(rows)} limit change(s) between {since:%Y-%m-%d %H:%M} and {until:%Y-%m-%d %H:%M}",
    }


@capability(
    "workorders.get_handovers",
    description="Shift handover reports, newest shift first (signed and acknowledged unless a status is given): "
    "the report text, its sections (alarms, work orders, limit changes, watch next shift), who signed and "
    "who acknowledged. A plain word search over the text with `query`.",
    input=HandoversInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_handovers(ctx: CapabilityContext, params: HandoversInput) -> dict[str, Any]:
    qs = handovers_search(ctx.user, query=params.query, status=params.status)
    if params.status is None:
        qs = qs.exclude(status="draft")
    rows = [
        {
            "id": h.pk,
            "date": h.date.isoformat(),
            "shift": h.shift,
            "period_start": h.period_start.isoformat(),
            "period_end": h.period_end.isoformat(),
            "status": h.status,
            "outgoing": h.outgoing.get_username(),
            "incoming": h.incoming.get_username() if h.incoming else None,
            "acknowledge_comment": h.acknowledge_comment,
            "report": h.report[:4000],
            # From the report as signed (the operator may have edited the agent's draft).
            "watch_next_shift": section_lines(h.report, WATCH_TITLE)[:20],
        }
        for h in qs[: params.limit]
    ]
    found = f" matching {params.query!r}" if params.query else ""
    return {"handovers": rows, "summary": f"{len(rows)} handover report(s){found}"}
