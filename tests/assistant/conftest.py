"""Small stand-ins for the maintenance capabilities other apps register, swapped in per test."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.access import OPERATOR
from core.capabilities import Capability, JobHandle, Tier, job_resolver, registry


class CellIn(BaseModel):
    cell_id: int


class LimitedCellIn(BaseModel):
    cell_id: int
    limit: int = 10


class WorkOrdersIn(BaseModel):
    cell_id: int | None = None
    limit: int = 20


class TrendIn(BaseModel):
    cell_id: int | None = None
    minutes: int = 60


class ChartIn(BaseModel):
    signal_def_ids: list[int]
    minutes: int = 60


class WorkOrderIn(BaseModel):
    work_order_id: int


class FakePlant:
    """What the stand-ins (shaped like the workorders capabilities) return; tests tweak it."""

    def __init__(self) -> None:
        self.work_orders: list[dict] = [
            {
                "id": 7,
                "cell_id": 2,
                "cell_tag": "P-02",
                "status": "analyzed",
                "title": "P-02 vibration trip",
                "rca_summary": "Bearing wear on the drive-end bearing: vibration rose from 3 to 7.4 mm/s over 2 days.",
            },
            {
                "id": 3,
                "cell_id": 3,
                "cell_tag": "C-01",
                "status": "completed",
                "title": "C-01 filter",
                "rca_summary": "",
            },
        ]
        self.failures: list[dict] = [
            {"id": 11, "cell_id": 2, "failure_mode": "bearing_wear", "root_cause": "lubrication"}
        ]
        self.kb = {"cell_id": 2, "summary": "P-02: centrifugal pump, SKF 6309 bearings.", "text": "KB text"}
        self.investigations: list[int] = []
        self.rca_ready = False


def _caps(plant: FakePlant) -> list[Capability]:
    def cap(name, handler, input, tier=Tier.READ, **kw):
        return Capability(
            name=name,
            description=f"test {name}",
            input=input,
            tier=tier,
            scopes=(OPERATOR,),
            handler=handler,
            tool_name=name.rsplit(".", 1)[-1],
            **kw,
        )

    def signals(ctx, p):
        tag = {2: "P-02", 3: "C-01"}[p.cell_id]
        rows = [
            {"signal_def_id": 5, "key": "vibration_mm_s", "value": 7.4, "state": "trip"},
            {"signal_def_id": 6, "key": "bearing_temp_c", "value": 71.0, "state": "normal"},
        ]
        return {
            "cell_id": p.cell_id,
            "cell_tag": tag,
            "signals": rows,
            "summary": f"{tag}: 2 signals, abnormal: vibration_mm_s",
        }

    def work_orders(ctx, p):
        rows = [w for w in plant.work_orders if p.cell_id is None or w["cell_id"] == p.cell_id]
        return {"cell_id": p.cell_id, "work_orders": rows, "summary": f"{len(rows)} work order(s)"}

    def start(ctx, p):
        plant.investigations.append(p.work_order_id)
        return JobHandle("test_investigation", str(p.work_order_id))

    @job_resolver("test_investigation")
    def resolve(ref):
        if plant.rca_ready:
            return "done", {"work_order_id": int(ref), "rca_summary": "Cavitation: suction strainer blocked."}
        return "pending", {"work_order_id": int(ref)}

    return [
        cap("workorders.get_current_signals", signals, CellIn),
        cap(
            "workorders.get_signal_trends",
            lambda ctx, p: {"cell_id": p.cell_id, "summary": "vibration rising 3.1 → 7.4 mm/s over 48 h"},
            TrendIn,
        ),
        cap(
            "workorders.render_signal_chart",
            lambda ctx, p: {
                "component": "signal_chart",
                "props": {  # the signal_chart contract (core/events/render_props.py)
                    "cell_id": 2,
                    "signal_def_ids": p.signal_def_ids,
                    "minutes": 60,
                    "title": "P-02 vibration",
                    "series": [
                        {
                            "signal_def_id": i,
                            "key": "vibration_mm_s",
                            "points": [
                                {"t": "2026-01-01T00:00:00Z", "avg": 3.1},
                                {"t": "2026-01-01T01:00:00Z", "avg": 7.4},
                            ],
                        }
                        for i in p.signal_def_ids
                    ],
                },
            },
            ChartIn,
        ),
        cap(
            "workorders.get_failure_history",
            lambda ctx, p: {"failures": [f for f in plant.failures if f["cell_id"] == p.cell_id], "summary": "history"},
            LimitedCellIn,
        ),
        cap("workorders.get_work_orders", work_orders, WorkOrdersIn),
        cap("workorders.get_equipment_kb", lambda ctx, p: plant.kb, CellIn),
        cap("workorders.start_investigation", start, WorkOrderIn, tier=Tier.SAFE, returns_job=True),
    ]


@pytest.fixture
def plant():
    """Swap in the stand-in maintenance capabilities; restore any real ones afterwards."""
    plant = FakePlant()
    caps = _caps(plant)
    saved = [registry.get(c.name) for c in caps] + [registry.get(c.tool_name) for c in caps]
    for c in caps:
        for existing in (registry.get(c.name), registry.get(c.tool_name)):
            if existing is not None:
                registry.unregister(existing.name)
        registry.register(c)
    yield plant
    for c in caps:
        registry.unregister(c.name)
    for original in saved:
        if original is not None and original.name not in registry:
            registry.register(original)


@pytest.fixture(autouse=True)
def _no_investigator_wait(settings):
    settings.ARIA_ASSISTANT = {"investigator_wait_seconds": 0}


@pytest.fixture(autouse=True)
def _forget_published_tools():
    """Published tools register process-wide; each test starts without them."""
    yield
    for cap in registry.all():
        if cap.name.startswith("published."):
            registry.unregister(cap.name)


@pytest.fixture
def swap_capability():
    """Register a stand-in under a name another app may own; the original comes back after."""
    saved: list[Capability] = []
    added: list[str] = []

    def swap(cap: Capability) -> Capability:
        for existing in (registry.get(cap.name), registry.get(cap.tool_name)):
            if existing is not None:
                saved.append(existing)
                registry.unregister(existing.name)
        added.append(cap.name)
        return registry.register(cap)

    yield swap
    for name in added:
        registry.unregister(name)
    for original in saved:
        if original.name not in registry:
            registry.register(original)
