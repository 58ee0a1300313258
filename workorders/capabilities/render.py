"""Render tools: each returns {"component", "props"} and every props set carries cell_id.

The agent loop validates the props against the component's schema (core/events/render_props.py)
and publishes a `ui_render` event for every `render_*` result; the component is the tool's name
without `render_`.
"""

from typing import Any, Literal

from pydantic import BaseModel, Field, StrictBool, model_validator

from core.access import OPERATOR
from core.agents.engines.catalog import is_real_provider
from core.capabilities import CapabilityContext, Tier, capability
from core.errors import NotFound
from core.models import AgentRun
from sentinel import selectors as sentinel_selectors
from workorders import selectors
from workorders.capabilities.plant import signals_for
from workorders.models import FailureHistory


def _render(name: str, description: str, input: type[BaseModel]):
    return capability(f"workorders.{name}", description=description, input=input, tier=Tier.READ, scopes=(OPERATOR,))


class SignalChartInput(BaseModel):
    signal_def_ids: list[int] = Field(min_length=1, max_length=8)
    minutes: int = Field(default=60, ge=1, le=7 * 24 * 60)
    buckets: int = Field(default=30, ge=2, le=60)
    title: str = Field(default="", max_length=200)


class DiagnosisCardInput(BaseModel):
    cell_id: int
    title: str = Field(max_length=200)
    findings: list[str] = Field(default_factory=list, max_length=20)
    severity: Literal["info", "warning", "critical"] = "warning"
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    work_order_id: int | None = None


class PatternMatchInput(BaseModel):
    cell_id: int
    failure_id: int = Field(description="The past FailureHistory row matched.")
    current_pattern: dict[str, Any] = Field(description='e.g. {"vibration_mm_s": {"peak": 5.0, "duration_min": 12}}')
    similarity: float | None = Field(default=None, ge=0.0, le=1.0)


class BarChartInput(BaseModel):
    cell_id: int
    title: str = Field(max_length=200)
    labels: list[str] = Field(min_length=1, max_length=50)
    values: list[float] = Field(min_length=1, max_length=50)
    unit: str = Field(default="", max_length=20)

    @model_validator(mode="after")
    def _same_length(self) -> "BarChartInput":
        if len(self.labels) != len(self.values):
            raise ValueError("labels and values must have the same length")
        return self


class CellInput(BaseModel):
    cell_id: int


class KbProgressInput(BaseModel):
    cell_id: int
    stage: str = Field(min_length=1, max_length=64, description='What the KB agent is doing, e.g. "reading_kb".')
    message: str = Field(default="", max_length=500)
    done: int = Field(ge=0, le=1000, description="Steps done so far.")
    total: int = Field(ge=1, le=1000, description="Steps planned.")

    @model_validator(mode="after")
    def _within_total(self) -> "KbProgressInput":
        if self.done > self.total:
            raise ValueError("done must not exceed total")
        return self


class WorkOrderCardInput(BaseModel):
    work_order_id: int
    printable: StrictBool = Field(default=False, description="Link the printable work order (/workorders/<id>/print).")


def print_url(work_order_id: int) -> str:
    return f"/workorders/{work_order_id}/print"


@_render(
    "render_signal_chart", "Show a trend chart of the given signals (same cell) in the operator's UI.", SignalChartInput
)
def render_signal_chart(ctx: CapabilityContext, params: SignalChartInput) -> dict[str, Any]:
    signals = signals_for(None, params.signal_def_ids)
    trends = sentinel_selectors.trends(signals, minutes=params.minutes, buckets=params.buckets, digits=3)
    cell = signals[0].cell
    series = [
        {
            "signal_def_id": t["signal_def_id"],
            "key": t["key"],
            "unit": t["unit"],
            "thresholds": t["thresholds"],
            "points": [{"t": b["start"], "avg": b["avg"], "max": b["max"], "min": b["min"]} for b in t["buckets"]],
        }
        for t in trends
    ]
    title = params.title or f"{cell.tag}: {', '.join(t['key'] for t in trends)}"
    props = {
        "cell_id": cell.pk,
        "signal_def_ids": params.signal_def_ids,
        "minutes": params.minutes,
        "title": title,
        "series": series,
    }
    return {"component": "signal_chart", "props": props, "summary": f"chart of {len(series)} signal(s)"}


@_render(
    "render_diagnosis_card", "Show a diagnosis card (findings, severity, confidence) for a cell.", DiagnosisCardInput
)
def render_diagnosis_card(ctx: CapabilityContext, params: DiagnosisCardInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    props = {**params.model_dump(mode="json"), "cell_id": cell.pk, "cell_tag": cell.tag, **_offline_mark(ctx)}
    return {"component": "diagnosis_card", "props": props, "summary": f"diagnosis card: {params.title}"[:200]}


def _offline_mark(ctx: CapabilityContext) -> dict[str, Any]:
    """{offline, engine}: set when the agent run drawing the card runs on the offline engine."""
    run_id = ctx.extra.get("run_id")
    engine = AgentRun.objects.filter(pk=run_id).values_list("engine", flat=True).first() if run_id else None
    if not engine or is_real_provider(engine):
        return {"offline": False, "engine": None}
    return {"offline": True, "engine": engine}


@_render(
    "render_pattern_match",
    "Show the current signal pattern next to the past failure it matches.",
    PatternMatchInput,
)
def render_pattern_match(ctx: CapabilityContext, params: PatternMatchInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    failure = FailureHistory.objects.filter(pk=params.failure_id).first()
    if failure is None:
        raise NotFound(f"Failure {params.failure_id} not found.", field="failure_id")
    props = {
        "cell_id": cell.pk,
        "current_pattern": params.current_pattern,
        "past_failure": selectors.failure_as_dict(failure),
        "similarity": params.similarity,
    }
    return {"component": "pattern_match", "props": props, "summary": f"pattern match with {failure}"}


@_render("render_bar_chart", "Show a bar chart (labels, values, unit) for a cell.", BarChartInput)
def render_bar_chart(ctx: CapabilityContext, params: BarChartInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    props = {**params.model_dump(mode="json"), "cell_id": cell.pk}
    return {"component": "bar_chart", "props": props, "summary": f"bar chart: {params.title}"[:200]}


@_render("render_equipment_kb_card", "Show the cell's equipment KB card.", CellInput)
def render_equipment_kb_card(ctx: CapabilityContext, params: CellInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    kb = selectors.equipment_kb(cell)
    props = {"cell_id": cell.pk, "cell_tag": cell.tag, "name": cell.name, "kb": kb.data if kb else {}}
    return {"component": "equipment_kb_card", "props": props, "summary": f"KB card of {cell.tag}"}


@_render(
    "render_kb_progress",
    "Show how far the KB agent is (stage, message, done of total steps) for a cell.",
    KbProgressInput,
)
def render_kb_progress(ctx: CapabilityContext, params: KbProgressInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    props = {**params.model_dump(mode="json"), "cell_id": cell.pk, "cell_tag": cell.tag}
    return {"component": "kb_progress", "props": props, "summary": f"KB progress {params.done}/{params.total}"}


@_render(
    "render_work_order_card",
    "Show a work order card (status, RCA, actions, parts); printable=true links its printable page.",
    WorkOrderCardInput,
)
def render_work_order_card(ctx: CapabilityContext, params: WorkOrderCardInput) -> dict[str, Any]:
    wo = selectors.get_work_order(params.work_order_id)
    props = {
        "cell_id": wo.cell_id,
        "work_order": selectors.work_order_as_dict(wo, full=True),
        "printable": params.printable,
        "print_url": print_url(wo.pk) if params.printable else None,
    }
    return {"component": "work_order_card", "props": props, "summary": f"card of WO-{wo.pk}"}
