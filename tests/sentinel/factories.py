"""Small builders for sentinel tests."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from sentinel.models import Cell, Line, SignalDefinition, SignalLatest, Site

_counter = {"n": 0}


def make_cell(tag: str | None = None, *, onboarded: bool = True) -> Cell:
    _counter["n"] += 1
    site, _ = Site.objects.get_or_create(name="Test plant")
    line, _ = Line.objects.get_or_create(site=site, name="Line T")
    return Cell.objects.create(
        line=line, tag=tag or f"T-{_counter['n']:03d}", name="Test pump", onboarding_complete=onboarded
    )


def make_signal(cell: Cell | None = None, key: str = "vibration_mm_s", **fields) -> SignalDefinition:
    cell = cell or make_cell()
    defaults = {"display_name": key.replace("_", " "), "unit": "mm/s", "alert": 4.5, "trip": 7.1, "deadband": 0.2}
    defaults.update(fields)
    return SignalDefinition.objects.create(cell=cell, key=key, **defaults)


def set_latest(signal: SignalDefinition, value: float, *, time: datetime | None = None, **extra) -> SignalLatest:
    latest, _ = SignalLatest.objects.update_or_create(
        signal=signal, defaults={"time": time or timezone.now(), "value": value, **extra}
    )
    return latest
