"""`signal_features`: deterministic features of a cell's raw samples for any Investigator (model or
offline) — trend slope, shift from baseline, noise growth, one-sample jumps, flatlines, band levels
and cross-signal correlation (workorders/agents/diagnosis_features.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from pydantic import BaseModel, Field

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from sentinel.models import SignalDefinition, SignalSample
from workorders import selectors
from workorders.agents.diagnosis_features import cell_features

MAX_SAMPLES_PER_SIGNAL = 2000


class SignalFeaturesInput(BaseModel):
    cell_id: int = Field(description="Cell (equipment) id.")
    minutes: int = Field(default=240, ge=5, le=24 * 60, description="Window ending now.")


def signal_features_for_cell(cell_id: int, *, minutes: int = 240) -> dict[str, Any]:
    """Features of every enabled signal of the cell over the window (the newest samples, bounded)."""
    cell = selectors.get_cell(cell_id)
    since = timezone.now() - timedelta(minutes=minutes)
    signals = list(SignalDefinition.objects.filter(cell=cell, enabled=True).order_by("key"))
    series: dict[str, list[tuple[float, float]]] = {}
    for signal in signals:
        rows = list(
            SignalSample.objects.filter(signal=signal, time__gte=since)
            .order_by("-time")
            .values_list("time", "value")[:MAX_SAMPLES_PER_SIGNAL]
        )
        series[signal.key] = [(t.timestamp(), v) for t, v in reversed(rows)]
    limits = {
        s.key: {"low_alert": s.low_alert, "alert": s.alert, "high_alert": s.high_alert, "trip": s.trip} for s in signals
    }
    features = cell_features({k: v for k, v in series.items() if v}, limits)
    for signal in signals:
        if signal.key in features["signals"]:
            features["signals"][signal.key] |= {"signal_def_id": signal.pk, "unit": signal.unit}
    return {"cell_id": cell.pk, "cell_tag": cell.tag, "minutes": minutes, **features}


@capability(
    "workorders.signal_features",
    description=(
        "Per-signal features of a cell's raw samples over the last N minutes: baseline mean/std, end mean, "
        "shift in baseline σ, slope per hour, noise ratio (late vs baseline), largest one-sample jump in local "
        "noise scales, flat runs (identical repeated values), whether the last value is beyond a limit, each "
        "signal's role (vibration band 1×/2×/hf, flow, pressure, current, …), and pairwise correlations."
    ),
    input=SignalFeaturesInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def signal_features(ctx: CapabilityContext, params: SignalFeaturesInput) -> dict[str, Any]:
    data = signal_features_for_cell(params.cell_id, minutes=params.minutes)
    moved = [k for k, f in data["signals"].items() if abs(f.get("shift_sigma") or 0) >= 4]
    data["summary"] = (
        f"{data['cell_tag']}: features of {len(data['signals'])} signal(s) over {params.minutes} min; "
        f"shifted ≥ 4σ: {', '.join(moved) or 'none'}"
    )
    return data
