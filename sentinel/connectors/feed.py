"""What a connector session hands to the supervisor: mapped samples, stale marks, counters."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sentinel.services.ingest import VALUE_RANGE, value_in_range

MAX_UNKNOWN_LISTED = 50  # distinct unknown sources named per round (the connector lists at most this many)
MAX_ERROR_LENGTH = 500


@dataclass(frozen=True)
class TagTarget:
    signal_id: int
    scale: float = 1.0
    offset: float = 0.0

    def convert(self, raw: float) -> float:
        return raw * self.scale + self.offset


@dataclass
class Drained:
    samples: list[tuple[int, datetime, float]] = field(default_factory=list)
    stale_signal_ids: set[int] = field(default_factory=set)
    messages: int = 0
    errors: int = 0
    bad_quality: int = 0
    unknown: dict[str, int] = field(default_factory=dict)  # the first MAX_UNKNOWN_LISTED sources seen
    unknown_total: int = 0  # every value for an unmapped source, named in `unknown` or not
    latest_time: datetime | None = None  # the newest sample time (the supervisor refuses the future)
    last_message_at: datetime | None = None
    last_error: str | None = None
    status: str | None = None  # connected / error / connecting when the session changed it


class Feed:
    """Thread-safe inbox of one connector: network threads add, the supervisor drains."""

    def __init__(self, tags: dict[str, TagTarget]) -> None:
        self.tags = tags
        self._lock = threading.Lock()
        self._pending = Drained()

    def target(self, source: str) -> TagTarget | None:
        return self.tags.get(source)

    def message(self) -> None:
        with self._lock:
            self._pending.messages += 1
            self._pending.last_message_at = datetime.now(UTC)

    def sample(self, source: str, time: datetime, raw: float) -> bool:
        """Map and queue one value; an unmapped source is counted as unknown. True if mapped."""
        return self.samples(source, [(time, raw)]) == 1

    def samples(self, source: str, values: list[tuple[datetime, float]]) -> int:
        """Values of one source (a JSON topic, an OPC UA node): `sourced_samples` for one source."""
        return self.sourced_samples([(source, time, raw) for time, raw in values])

    def sourced_samples(self, rows: Iterable[tuple[str, datetime, float]]) -> int:
        """Map and queue (source, time, raw) rows of one message under one lock; unmapped sources
        are counted as unknown (the first MAX_UNKNOWN_LISTED named). Returns how many were mapped."""
        tags = self.tags
        mapped: list[tuple[int, datetime, float]] = []
        append = mapped.append
        unknown: list[str] = []
        out_of_range: str | None = None
        for source, time, raw in rows:
            target = tags.get(source)
            if target is None:
                unknown.append(source)
                continue
            value = raw if target.scale == 1.0 and target.offset == 0.0 else raw * target.scale + target.offset
            if value_in_range(value):
                append((target.signal_id, time, value))
            else:  # ingest would refuse the whole batch for it: dropped here, said as an error
                out_of_range = f"{source}: value {value:g} (after the tag's scale and offset) {VALUE_RANGE}"
        if out_of_range is not None:
            self.error(out_of_range)
        if not mapped and not unknown:
            return 0
        newest = max(row[1] for row in mapped) if mapped else None
        with self._lock:
            pending = self._pending
            pending.samples += mapped
            if newest is not None and (pending.latest_time is None or newest > pending.latest_time):
                pending.latest_time = newest
            if unknown:
                self._unknown(pending, unknown)
        return len(mapped)

    @staticmethod
    def _unknown(pending: Drained, sources: Iterable[str], counts: dict[str, int] | None = None) -> None:
        named = pending.unknown
        for source in sources:
            count = counts[source] if counts is not None else 1
            pending.unknown_total += count
            if source in named:
                named[source] += count
            elif len(named) < MAX_UNKNOWN_LISTED:  # bounded: a flood of unmapped tags costs no memory
                named[source] = count

    def bad_quality(self, source: str, reason: str) -> None:
        """A value the source itself flags bad/uncertain: not stored, the signal goes stale."""
        target = self.tags.get(source)
        with self._lock:
            self._pending.bad_quality += 1
            self._pending.last_error = f"{source}: {reason}"[:MAX_ERROR_LENGTH]
            if target is not None:
                self._pending.stale_signal_ids.add(target.signal_id)

    def stale(self, sources: list[str]) -> None:
        ids = {t.signal_id for t in (self.tags.get(s) for s in sources) if t is not None}
        with self._lock:
            self._pending.stale_signal_ids |= ids

    def error(self, message: str, *, status: str | None = None) -> None:
        with self._lock:
            self._pending.errors += 1
            self._pending.last_error = message[:MAX_ERROR_LENGTH]
            if status:
                self._pending.status = status

    def status(self, status: str, error: str | None = None) -> None:
        with self._lock:
            self._pending.status = status
            if error:
                self._pending.last_error = error[:MAX_ERROR_LENGTH]

    def put_back(self, drained: Drained) -> None:
        """The counters and marks of a round whose status write failed (the database is down):
        reported with the next round instead of lost. Samples are kept by the supervisor's backlog."""
        with self._lock:
            pending = self._pending
            pending.messages += drained.messages
            pending.errors += drained.errors
            pending.bad_quality += drained.bad_quality
            self._unknown(pending, drained.unknown, drained.unknown)
            pending.unknown_total += drained.unknown_total - sum(drained.unknown.values())
            pending.stale_signal_ids |= drained.stale_signal_ids
            pending.last_message_at = pending.last_message_at or drained.last_message_at
            pending.last_error = pending.last_error or drained.last_error
            pending.status = pending.status or drained.status

    def drain(self) -> Drained:
        with self._lock:
            drained, self._pending = self._pending, Drained()
        return drained
