"""Shared by the history tests: a fixed clock and ingest through the service at given offsets."""

from datetime import UTC, datetime, timedelta

from sentinel.models import SignalDefinition
from sentinel.services import samples_ingest

NOW = datetime(2026, 11, 30, 12, 0, 30, tzinfo=UTC)
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # two hours before NOW


def ingest_at(signal: SignalDefinition, offsets_and_values, *, base: datetime = T0) -> None:
    """Ingest (seconds after `base`, value) pairs through `samples_ingest`, as of NOW."""
    samples_ingest(
        samples=[
            {"signal_id": signal.pk, "time": (base + timedelta(seconds=s)).isoformat(), "value": v}
            for s, v in offsets_and_values
        ],
        now=NOW,
    )
