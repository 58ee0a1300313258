"""Read capabilities over the plant's signals and alarms."""

import math
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field, model_validator

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from core.errors import InvalidInput
from core.json_types import RowId
from sentinel import selectors as sentinel_selectors
from sentinel.models import Cell, SignalDefinition
from workorders import selectors

MAX_TREND_MINUTES = 7 * 24 * 60
MAX_CELL_IDS = 500  # find_cells by id: the cells one plan listing can point at, in one read


class CellInput(BaseModel):
    cell_id: int = Field(description="Cell (equipment) id.")


class TrendsInput(BaseModel):
    cell_id: int | None = Field(default=None, description="All enabled signals of this cell…")
    signal_def_ids: list[int] | None = Field(default=None, description="…or these signals.")
    minutes: int = Field(default=60, ge=1, le=MAX_TREND_MINUTES, description="Window ending now, in minutes…")
    hours: float | None = Field(
        default=None, gt=0, le=MAX_TREND_MINUTES / 60, description="…or in hours ('last 6 hours' → 6)…"
    )
    since: datetime | None = Field(default=None, description="…or from this ISO datetime ('since Monday') to now.")
    buckets: int = Field(default=12, ge=1, le=60, description="Number of time buckets (min/avg/max each).")

    @model_validator(mode="after")
    def _one_target(self) -> "TrendsInput":
        if self.cell_id is None and not self.signal_def_ids:
            raise ValueError("give cell_id or signal_def_ids")
        return self

    def window_minutes(self) -> int:
        """The window the caller meant: since, else hours, else minutes (at most seven days)."""
        if self.since is not None:
            since = self.since if timezone.is_aware(self.since) else timezone.make_aware(self.since)
            minutes = math.ceil((timezone.now() - since).total_seconds() / 60)
            if minutes < 1 or minutes > MAX_TREND_MINUTES:
                raise InvalidInput("since must be in the past, at most 7 days ago.", field="since")
            return minutes
        if self.hours is not None:
            return max(1, round(self.hours * 60))
        return self.minutes


def signals_for(cell_id: int | None, signal_def_ids: list[int] | None) -> list[SignalDefinition]:
    if signal_def_ids:
        signals = list(SignalDefinition.objects.filter(pk__in=signal_def_ids).order_by("pk"))
        missing = sorted(set(signal_def_ids) - {s.pk for s in signals})
        if missing:
            raise InvalidInput(f"Unknown signal ids: {missing}.", field="signal_def_ids")
        return signals
    cell = selectors.get_cell(cell_id)
    return list(SignalDefinition.objects.filter(cell=cell, enabled=True).order_by("key"))


@capability(
    "workorders.get_current_signals",
    description="Latest value, state (normal/alert/trip/low) and thresholds of every signal of a cell.",
    input=CellInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_current_signals(ctx: CapabilityContext, params: CellInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    signals = selectors.current_signals(cell)
    abnormal = [s["key"] for s in signals if s["state"] not in ("normal", "unknown")]
    return {
        "cell_id": cell.pk,
        "cell_tag": cell.tag,
        "signals": signals,
        "summary": f"{cell.tag}: {len(signals)} signals, abnormal: {', '.join(abnormal) or 'none'}",
    }


@capability(
    "workorders.get_signal_trends",
    description=(
        "Bucketed trend (min/avg/max per bucket) of a cell's signals or given signal ids over the last N minutes, "
        "with each signal's peak and breach window (first/last time beyond its alert limit, duration_min)."
    ),
    input=TrendsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_signal_trends(ctx: CapabilityContext, params: TrendsInput) -> dict[str, Any]:
    minutes = params.window_minutes()
    signals = signals_for(params.cell_id, params.signal_def_ids)
    trends = sentinel_selectors.trends(signals, minutes=minutes, buckets=params.buckets, digits=3)
    breaching = [t["key"] for t in trends if t["breach"]]
    return {
        "cell_id": params.cell_id if params.cell_id is not None else (signals[0].cell_id if signals else None),
        "minutes": minutes,
        "buckets": params.buckets,
        "signals": trends,
        "summary": f"{len(trends)} signal trend(s) over {minutes} min; beyond limits: {', '.join(breaching) or 'none'}",
    }


@capability(
    "workorders.get_signal_anomalies",
    description=(
        "Recent alarms of a cell (newest first): severity, direction, threshold, value, peak, state; a shelved or "
        "out-of-service alarm's `suppression` says who took it out of view, when, why and until when."
    ),
    input=CellInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_signal_anomalies(ctx: CapabilityContext, params: CellInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    anomalies = selectors.cell_anomalies(cell)
    return {"cell_id": cell.pk, "anomalies": anomalies, "summary": f"{len(anomalies)} alarm(s) on {cell.tag}"}


class FindCellsInput(BaseModel):
    query: str = Field(default="", max_length=100, description="Tag or name fragment, e.g. 'P-02' or 'pump'.")
    limit: int = Field(default=20, ge=1, le=100)
    cell_ids: list[RowId] = Field(
        default_factory=list,
        max_length=MAX_CELL_IDS,
        description="Only these cells (all of them, whatever `limit`): e.g. to name the cells a list of ids points at.",
    )


@capability(
    "workorders.find_cells",
    description=(
        "Find equipment cells by tag or name (e.g. 'P-02'), or by id (`cell_ids`); returns ids to use with the "
        "other tools."
    ),
    input=FindCellsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def find_cells(ctx: CapabilityContext, params: FindCellsInput) -> dict[str, Any]:
    query = params.query.strip()
    cells = Cell.objects.select_related("line__site").order_by("tag")
    if query:
        cells = cells.filter(Q(tag__iexact=query) | Q(tag__icontains=query) | Q(name__icontains=query))
    if params.cell_ids:
        cells = cells.filter(pk__in=params.cell_ids)
    rows = [
        {
            "cell_id": c.pk,
            "tag": c.tag,
            "name": c.name,
            "equipment_type": c.equipment_type,
            "line": c.line.name,
            "site": c.line.site.name,
            "onboarding_complete": c.onboarding_complete,
        }
        for c in cells[: len(params.cell_ids) if params.cell_ids else params.limit]
    ]
    return {"cells": rows, "summary": f"{len(rows)} cell(s) match {query!r}" if query else f"{len(rows)} cell(s)"}
