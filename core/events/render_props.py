"""The `ui_render` component contract: one pydantic schema per component's `props`.

`publish("ui_render", …)` validates `props` against the schema of its `component` (an unknown
component is refused like an unknown event type). These are the UI's contract, like the event
types: they name plant things (cells, signals, work orders) as ids and plain JSON, and import no
app. An app that adds a component registers its schema with `register_ui_component(name, Model)`
from its `apps.ready()` and documents it in docs/EVENTS.md. Every component carries `cell_id`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Text = str  # short, human-readable text (rendered with textContent, never as HTML)


class Props(BaseModel):
    """Base of every component's props: exact top-level fields, always a cell."""

    model_config = ConfigDict(extra="forbid")

    cell_id: int


class _Open(BaseModel):
    """A nested record another service shapes (a work order, a past failure): its named fields are
    checked, further fields pass (they are drawn as key/values)."""

    model_config = ConfigDict(extra="allow")


class AlertBanner(Props):
    severity: Literal["alert", "trip"]
    message: Text = Field(max_length=1000)
    anomaly_id: int | None = None


class ChartPoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: str
    avg: float | None = None
    max: float | None = None
    min: float | None = None


class ChartSeries(BaseModel):
    model_config = ConfigDict(extra="forbid")

    signal_def_id: int
    key: str = Field(max_length=200)
    unit: str = Field(default="", max_length=40)
    thresholds: dict[str, float | None] = Field(default_factory=dict)
    points: list[ChartPoint] = Field(default_factory=list, max_length=500)


class SignalChart(Props):
    signal_def_ids: list[int] = Field(min_length=1, max_length=8)
    minutes: int = Field(ge=1)
    title: Text = Field(max_length=200)
    series: list[ChartSeries] = Field(max_length=8)


class BarChart(Props):
    title: Text = Field(max_length=200)
    labels: list[str] = Field(min_length=1, max_length=50)
    values: list[float] = Field(min_length=1, max_length=50)
    unit: str = Field(default="", max_length=20)

    @model_validator(mode="after")
    def _same_length(self) -> BarChart:
        if len(self.labels) != len(self.values):
            raise ValueError("labels and values must have the same length")
        return self


class EquipmentKbCard(Props):
    cell_tag: str = Field(max_length=64)
    name: Text = Field(default="", max_length=200)
    kb: dict[str, Any]


class KbProgress(Props):
    cell_tag: str = Field(max_length=64)
    stage: str = Field(min_length=1, max_length=64)
    message: Text = Field(default="", max_length=500)
    done: int = Field(ge=0)
    total: int = Field(ge=1)

    @model_validator(mode="after")
    def _within_total(self) -> KbProgress:
        if self.done > self.total:
            raise ValueError("done must not exceed total")
        return self


class PastFailure(_Open):
    id: int
    failure_mode: str
    failure_time: str
    root_cause: str = ""
    signal_patterns: dict[str, Any] = Field(default_factory=dict)


class PatternMatch(Props):
    current_pattern: dict[str, dict[str, float]]
    past_failure: PastFailure
    similarity: float | None = Field(default=None, ge=0.0, le=1.0)


class DiagnosisCard(Props):
    cell_tag: str = Field(max_length=64)
    title: Text = Field(max_length=200)
    findings: list[Text] = Field(default_factory=list, max_length=20)
    severity: Literal["info", "warning", "critical"] = "warning"
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    work_order_id: int | None = None
    # Set by the render tool from the run's engine, never by the model: the offline engine wrote it.
    offline: bool = False
    engine: str | None = Field(default=None, max_length=32)


class WorkOrderSummary(_Open):
    id: int
    cell_id: int
    title: str
    status: str


class WorkOrderCard(Props):
    work_order: WorkOrderSummary
    printable: bool = False
    print_url: str | None = Field(default=None, max_length=200, pattern=r"^/workorders/\d+/print$")

    @model_validator(mode="after")
    def _print_link(self) -> WorkOrderCard:
        if self.printable and not self.print_url:
            raise ValueError("a printable card needs its print_url")
        return self


UI_COMPONENTS: dict[str, type[Props]] = {
    "alert_banner": AlertBanner,
    "signal_chart": SignalChart,
    "bar_chart": BarChart,
    "equipment_kb_card": EquipmentKbCard,
    "kb_progress": KbProgress,
    "pattern_match": PatternMatch,
    "diagnosis_card": DiagnosisCard,
    "work_order_card": WorkOrderCard,
}


def register_ui_component(name: str, model: type[Props]) -> None:
    """Apps add components from their apps.ready() (and document them in docs/EVENTS.md)."""
    if name in UI_COMPONENTS and UI_COMPONENTS[name] is not model:
        raise ValueError(f"UI component {name!r} is already defined.")
    UI_COMPONENTS[name] = model


def unregister_ui_component(name: str) -> None:
    UI_COMPONENTS.pop(name, None)


def validate_props(component: str, props: Any) -> dict[str, Any]:
    """The props as JSON, validated against the component's schema; ValueError names the field."""
    model = UI_COMPONENTS.get(component)
    if model is None:
        raise ValueError(f"unknown component {component!r}")
    try:
        return model.model_validate(props).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or component
        raise ValueError(f"{component} props.{where}: {first.get('msg')}") from None
