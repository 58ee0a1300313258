"""Samples a connector received that the database has not taken yet.

The supervisor ingests from here, oldest first. A batch the database refused with an error (it
is down, restarting, failing over) stays at the head and is retried with exponential backoff;
new samples queue behind it in order. The backlog is bounded (`ARIA_CONNECTOR_BACKLOG` samples
per connector): when full, the oldest samples are dropped and the drop is reported as an error,
never silently.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

DEFAULT_BACKLOG = 100_000  # samples per connector (a 5,000-tag site for 20 s)
RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0

Sample = tuple[int, datetime, float]


def backlog_limit() -> int:
    return max(1, int(getattr(settings, "ARIA_CONNECTOR_BACKLOG", DEFAULT_BACKLOG)))


@dataclass
class Backlog:
    limit: int = field(default_factory=backlog_limit)
    batches: deque[list[Sample]] = field(default_factory=deque)
    size: int = 0
    failures: int = 0  # consecutive failed attempts
    retry_at: float = 0.0  # monotonic time of the next attempt
    dropped_total: int = 0

    def add(self, samples: list[Sample], batch_size: int) -> int:
        """Queue `samples` in batches; returns how many of the oldest were dropped to make room."""
        for start in range(0, len(samples), batch_size):
            batch = samples[start : start + batch_size]
            self.batches.append(batch)
            self.size += len(batch)
        dropped = 0
        while self.size > self.limit:
            head = self.batches[0]
            excess = self.size - self.limit
            if len(head) <= excess:
                self.batches.popleft()
                cut = len(head)
            else:
                self.batches[0] = head[excess:]
                cut = excess
            self.size -= cut
            dropped += cut
        self.dropped_total += dropped
        return dropped

    def due(self, monotonic: float) -> bool:
        return bool(self.batches) and monotonic >= self.retry_at

    def head(self) -> list[Sample]:
        return self.batches[0]

    def done(self) -> None:
        """The head batch was stored (or refused for good): drop it, end any backoff."""
        self.size -= len(self.batches.popleft())
        self.failures, self.retry_at = 0, 0.0

    def failed(self, monotonic: float) -> float:
        """The head batch hit a database error: keep it; returns the seconds until the retry."""
        delay = min(RETRY_MAX_SECONDS, RETRY_FIRST_SECONDS * 2**self.failures)
        self.failures += 1
        self.retry_at = monotonic + delay
        return delay
