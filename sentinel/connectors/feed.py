"""What a connector session hands to the supervisor: mapped samples, stale marks, counters."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime

MAX_UNKNOWN_LISTED = 50
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
    unknown: dict[str, int] = field(default_factory=dict)
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
        target = self.tags.get(source)
        with self._lock:
            if target is None:
                self._pending.unknown[source] = self._pending.unknown.get(source, 0) + 1
                return False
            self._pending.samples.append((target.signal_id, time, target.convert(raw)))
            return True

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
            for source, count in drained.unknown.items():
                pending.unknown[source] = pending.unknown.get(source, 0) + count
            pending.stale_signal_ids |= drained.stale_signal_ids
            pending.last_message_at = pending.last_message_at or drained.last_message_at
            pending.last_error = pending.last_error or drained.last_error
            pending.status = pending.status or drained.status

    def drain(self) -> Drained:
        with self._lock:
            drained, self._pending = self._pending, Drained()
        return drained
