"""Ingest lanes: a connector's samples split by signal over several database connections.

One connection stores one batch at a time, and at plant scale PostgreSQL spends ~25 µs of one
backend's CPU per row (the COPY, the latest-value upsert, the foreign-key checks at commit): a
single connection tops out near 40k rows/s however many cores the database has. With
`ARIA_CONNECTOR_INGEST_LANES = N` (PostgreSQL only: SQLite has one writer) each round's samples
are split by signal (`signal_id % N`) into N lanes, each with its own bounded backlog, thread and
connection, and the round waits for all of them. A signal always travels in the same lane, so
its samples are still stored in the order they arrived (the split never makes one out of order),
and two lanes never write the same latest-value row. With one lane (the default) everything runs
on the caller's thread, as before.

`Lanes` reads like one backlog (size, failures, dropped_total, limit summed over the lanes) for
the supervisor's status and error messages.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.db import close_old_connections, connection

from sentinel.connectors.backlog import Backlog, Sample, backlog_limit

MAX_LANES = 16


@dataclass
class LaneResult:
    stored: int = 0
    errors: int = 0
    last_error: str = ""


def lanes_count() -> int:
    """`ARIA_CONNECTOR_INGEST_LANES` (1..16) on PostgreSQL; always 1 elsewhere."""
    if connection.vendor != "postgresql":
        return 1
    return min(MAX_LANES, max(1, int(getattr(settings, "ARIA_CONNECTOR_INGEST_LANES", 1))))


class Lanes:
    def __init__(self, count: int = 1) -> None:
        limit = backlog_limit()
        self.backlogs = [Backlog(limit=max(1, limit // count)) for _ in range(count)]
        # One single-thread executor per lane: lane i always runs on the same thread (and so on
        # the same database connection), which `close` can then close.
        self._threads = (
            [ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"aria-ingest-lane-{i}") for i in range(count)]
            if count > 1
            else []
        )

    @property
    def size(self) -> int:
        return sum(backlog.size for backlog in self.backlogs)

    @property
    def failures(self) -> int:
        return max(backlog.failures for backlog in self.backlogs)

    @property
    def dropped_total(self) -> int:
        return sum(backlog.dropped_total for backlog in self.backlogs)

    @property
    def limit(self) -> int:
        return sum(backlog.limit for backlog in self.backlogs)

    def add(self, samples: list[Sample], batch_size: int) -> int:
        """Queue `samples` in their signals' lanes; returns how many of the oldest were dropped."""
        count = len(self.backlogs)
        if count == 1:
            return self.backlogs[0].add(samples, batch_size)
        split: list[list[Sample]] = [[] for _ in range(count)]
        for sample in samples:
            split[sample[0] % count].append(sample)
        return sum(backlog.add(part, batch_size) for backlog, part in zip(self.backlogs, split, strict=True) if part)

    def drain(self, store: Callable[[Backlog], LaneResult]) -> list[LaneResult]:
        """Run `store` on every lane's backlog, the lanes at once, and wait for all of them."""
        if not self._threads:
            return [store(self.backlogs[0])]
        futures = [
            thread.submit(_in_lane, store, backlog)
            for thread, backlog in zip(self._threads, self.backlogs, strict=True)
            if backlog.batches
        ]
        return [future.result() for future in futures]

    def close(self) -> None:
        """Close every lane's database connection and stop its thread."""
        for thread in self._threads:
            thread.submit(_close_connection).result()
            thread.shutdown()
        self._threads = []


def _close_connection() -> None:
    connection.close()  # looked up in the lane's thread: its own connection


def _in_lane(store: Callable[[Backlog], LaneResult], backlog: Backlog) -> LaneResult:
    close_old_connections()  # a lane's connection obeys CONN_MAX_AGE and health checks like the main one
    return store(backlog)
