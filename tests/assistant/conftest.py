"""Small stand-ins for the maintenance capabilities other apps register, swapped in per test."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.access import OPERATOR
from core.capabilities import Capability, Tier, registry


class CellIn(BaseModel):
    cell_id: int


class TagIn(BaseModel):
    tag: str


class TrendIn(BaseModel):
    cell_id: int
    hours: int = 24


class InvestigateIn(BaseModel):
    cell_id: int
    reason: str = ""


CELLS = [{"id": 2, "tag": "P-02", "name": "P-02 feed pump"}, {"id": 3, "tag": "C-01", "name": "C-01 compressor"}]


class FakePlant:
    """What the stand-in capabilities return; tests tweak it."""

    def __init__(self) -> None:
        self.work_orders: list[dict] = [
            {
                "id": 7,
                "cell_id": 2,
                "status": "analyzed",
                "title": "P-02 vibration trip",
                "rca_summary": "Bearing wear on the drive-end bearing: vibration rose from 3 to 7.4 mm/s over 2 days.",
            }
        ]
        self.failures: list[dict] = [{"id": 11, "cell_id": 2, "failure_mode": "bearing wear", "cause": "lubrication"}]
        self.kb = {"cell_id": 2, "summary": "P-02: centrifugal pump, SKF 6309 bearings.", "text": "KB text"}
        self.investigations: list[dict] = []


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

    return [
        cap("workorders.find_cell", lambda ctx, p: [c for c in CELLS if c["tag"] == p.tag], TagIn),
        cap(
            "workorders.get_current_signals",
            lambda ctx, p: {"cell_id": p.cell_id, "signals": [{"name": "vibration", "value": 7.4, "unit": "mm/s"}]},
            CellIn,
        ),
        cap(
            "workorders.get_signal_trends",
            lambda ctx, p: {"cell_id": p.cell_id, "summary": "vibration rising 3.1 → 7.4 mm/s over 48 h"},
            TrendIn,
        ),
        cap(
            "workorders.render_signal_chart",
            lambda ctx, p: {
                "component": "signal_chart",
                "props": {"cell_id": p.cell_id, "series": [{"name": "vibration", "points": [[0, 3.1], [1, 7.4]]}]},
            },
            TrendIn,
        ),
        cap(
            "workorders.get_failure_history",
            lambda ctx, p: [f for f in plant.failures if f["cell_id"] == p.cell_id],
            CellIn,
        ),
        cap(
            "workorders.get_work_orders",
            lambda ctx, p: [w for w in plant.work_orders if w["cell_id"] == p.cell_id],
            CellIn,
        ),
        cap("workorders.get_equipment_kb", lambda ctx, p: plant.kb, CellIn),
        cap(
            "workorders.start_investigation",
            lambda ctx, p: (
                plant.investigations.append({"cell_id": p.cell_id, "reason": p.reason})
                or {"summary": f"investigation of cell {p.cell_id} queued", "work_order_id": 99}
            ),
            InvestigateIn,
            tier=Tier.SAFE,
        ),
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
