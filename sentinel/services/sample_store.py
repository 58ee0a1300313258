"""Writing a validated batch of samples: the history rows, the latest-value rows, and what the
batch told about order and duplicates. Ingest (`sentinel.services.ingest`) calls `samples_store`
inside its transaction; nothing else writes samples.

PostgreSQL, in two statements whatever the batch size (the per-signal figures — newest value,
oldest time — are summed up in Python from the batch already in memory; the COPY stream and the
arrays are packed in PostgreSQL's binary formats by `sentinel.services.pg_binary`):
1. one binary COPY of the batch, in (signal, time) order, straight into the samples table under a
   savepoint. A (signal, time) already stored — or twice in the batch — fails it: back to the
   savepoint, and the batch goes in by `INSERT … ON CONFLICT (signal_id, time) DO NOTHING` in the
   same order (the first value for an instant wins; the rest are counted as duplicates). One key
   order on both paths, so two batches sharing instants wait on each other, never in a cycle;
2. one statement over the per-signal arrays that reads, before it writes, the signals without a
   latest value (new, or unknown: a 422, the transaction rolls back) and those whose oldest sample
   is older than their latest (out of order); upserts each signal's newest value (`ON CONFLICT …
   WHERE latest.time < excluded.time`, rows in signal order — the lock order of docs/KERNEL.md)
   returning those whose new value can change something (a limit crossed, a breach in progress,
   an open alarm); and clears the open stale conditions of signals with a fresh sample.
Elsewhere (SQLite): the same rules in portable chunked statements.

A latest value dated more than `AHEAD_TRUSTED` past the server's clock cannot stand for the present
(a gateway whose clock ran minutes fast, or a client posting ahead on purpose: ingest accepts up to
5 minutes ahead): a fresh sample (at or after `fresh_after`) replaces it although it is older, and
is evaluated, not reported out of order. Before, one sample 5 minutes ahead made every real sample
of the next 5 minutes "out of order" — stored, never evaluated — so a trip raised nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from core.errors import InvalidInput
from sentinel.choices import OPEN_ALARM_STATES
from sentinel.models import Alarm, SignalDefinition, SignalLatest, SignalSample, StaleCondition
from sentinel.services.evaluation import id_list
from sentinel.services.pg_binary import (
    Float8Array,
    Int8Array,
    TimestamptzArray,
    binary_arrays,
    copy_samples,
    pg_microseconds,
)

# How far ahead of the server's clock a signal's latest time still counts as the present.
AHEAD_TRUSTED = timedelta(seconds=10)
MAX_OUT_OF_ORDER_INDICES = 100  # the response names at most this many; the count is always exact

Sample = tuple[int, datetime, float]


@dataclass
class OutOfOrder:
    """Samples older than their signal's latest stored sample: kept as history, never evaluated
    (only a signal's newest value raises, escalates or clears), so a late gateway sees why."""

    count: int = 0
    indices: list[int] = field(default_factory=list)  # batch positions, the first MAX_OUT_OF_ORDER_INDICES

    def add(self, index: int) -> None:
        self.count += 1
        if len(self.indices) < MAX_OUT_OF_ORDER_INDICES:
            self.indices.append(index)


@dataclass
class Stored:
    stored: int  # samples written (the rest were duplicates)
    out_of_order: OutOfOrder
    signal_ids: set[int]  # every signal in the batch
    watch: set[int] | None  # those whose new value may change something; None: evaluate them all


def unknown_signal(index: int, signal_id: int) -> InvalidInput:
    return InvalidInput(
        f"samples[{index}].signal_id: unknown signal {signal_id}", field=f"samples.{index}.signal_id", index=index
    )


def _refuse_unknown(samples: list[Sample], known: set[int]) -> None:
    """A 422 naming the first item whose signal does not exist (before anything is committed)."""
    for index, (signal_id, _, _) in enumerate(samples):
        if signal_id not in known:
            raise unknown_signal(index, signal_id)


def _newest(samples: list[Sample]) -> list[tuple[int, datetime, float]]:
    """The newest sample of each signal, in signal order; a repeated instant keeps its first value."""
    newest: dict[int, tuple[datetime, float]] = {}
    for signal_id, time, value in samples:
        current = newest.get(signal_id)
        if current is None or time > current[0]:
            newest[signal_id] = (time, value)
    return [(signal_id, time, value) for signal_id, (time, value) in sorted(newest.items())]


def samples_store(samples: list[Sample], *, now: datetime, fresh_after: datetime) -> Stored:
    """Write a validated, non-empty batch (inside the caller's transaction). A signal with a
    sample at or after `fresh_after` has its open stale condition cleared at `now`."""
    if connection.vendor == "postgresql":
        return _store_postgresql(samples, now=now, fresh_after=fresh_after)
    stored = _store_portable(samples, ahead=now + AHEAD_TRUSTED, fresh_after=fresh_after)
    returning = sorted({s for s, t, _ in samples if t >= fresh_after})
    if returning:
        StaleCondition.objects.filter(signal_id__in=id_list(returning), cleared_at__isnull=True).update(cleared_at=now)
    return stored


# PostgreSQL ------------------------------------------------------------------------------------


def _table(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


@dataclass
class _Signals:
    """Per signal of a batch, in signal order: its newest sample (the first value of a repeated
    instant) and its oldest time."""

    ids: list[int]
    newest_times: list[datetime]
    newest_values: list[float]
    oldest_times: list[datetime]


def _per_signal(samples: list[Sample]) -> _Signals:
    newest: dict[int, tuple[datetime, float]] = {}
    oldest: dict[int, datetime] = {}
    for signal_id, time, value in samples:
        current = newest.get(signal_id)
        if current is None:
            newest[signal_id] = (time, value)
            oldest[signal_id] = time
        elif time > current[0]:
            newest[signal_id] = (time, value)
        elif time < oldest[signal_id]:
            oldest[signal_id] = time
    ids = sorted(newest)
    pairs = [newest[s] for s in ids]
    return _Signals(ids, [p[0] for p in pairs], [p[1] for p in pairs], [oldest[s] for s in ids])


def _store_postgresql(samples: list[Sample], *, now: datetime, fresh_after: datetime) -> Stored:
    # Raw psycopg on Django's connection: binary COPY and array parameters, no temporary table.
    import psycopg

    signals = _per_signal(samples)
    connection.ensure_connection()
    with connection.wrap_database_errors, binary_arrays(psycopg.Cursor(connection.connection)) as cursor:
        stored = samples_write(cursor, samples)
        found = _latest_upsert(cursor, signals, now=now, fresh_after=fresh_after)
    if found.unknown:
        first = next(i for i, sample in enumerate(samples) if sample[0] in found.unknown)
        raise unknown_signal(first, samples[first][0])  # the caller's transaction rolls back
    out_of_order = OutOfOrder()
    if found.latest_before:
        before = found.latest_before
        for index, (signal_id, time, _) in enumerate(samples):
            previous = before.get(signal_id)
            if previous is not None and time < previous:
                out_of_order.add(index)
    return Stored(stored=stored, out_of_order=out_of_order, signal_ids=set(signals.ids), watch=found.watch)


SAVEPOINT = "aria_ingest_copy"


def samples_write(cursor: Any, samples: list[Sample]) -> int:
    """Store the samples in (signal, time) order; the number written (the rest were duplicates).
    `cursor` passes prepared binary arrays (`pg_binary.binary_arrays`)."""
    from psycopg.errors import UniqueViolation

    ordered = sorted(samples)  # (signal, time) order; a repeated instant fails the COPY anyway
    ids, times, values = zip(*ordered, strict=True)
    stream = copy_samples(ids, pg_microseconds(times), values)
    cursor.execute(f"SAVEPOINT {SAVEPOINT}")
    try:
        with cursor.copy(f"COPY {_table(SignalSample)} (signal_id, time, value) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(stream)
    except UniqueViolation:
        cursor.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")
        cursor.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
        return _insert_skipping_duplicates(cursor, samples)
    cursor.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
    return len(samples)


def _insert_skipping_duplicates(cursor: Any, samples: list[Sample]) -> int:
    """The batch in (signal, time, index) order, skipping stored instants and repeats in the batch."""
    ids, times, values = zip(*samples, strict=True)
    cursor.execute(
        f"INSERT INTO {_table(SignalSample)} (signal_id, time, value) SELECT s, t, v FROM "
        "unnest(%b::int8[], %b::timestamptz[], %b::float8[]) WITH ORDINALITY AS b(s, t, v, i) "
        "ORDER BY s, t, i ON CONFLICT (signal_id, time) DO NOTHING",
        (Int8Array.of(ids), TimestamptzArray.of(pg_microseconds(times)), Float8Array.of(values)),
    )
    return int(cursor.rowcount)


@dataclass
class _Found:
    watch: set[int]  # upserted signals whose new value may change something, and new signals
    unknown: set[int]  # signals that do not exist
    latest_before: dict[int, datetime]  # signals with samples older than their latest: that latest


def _latest_upsert(cursor: Any, signals: _Signals, *, now: datetime, fresh_after: datetime) -> _Found:
    """One statement (every part reads the data as it was before it):
    - the upsert of each signal's newest value (the first value of a repeated instant; never over a
      newer one, unless that one is dated past `now + AHEAD_TRUSTED` and this one is fresh; fresh
      data ends staleness), in signal order, returning those whose new value can
      change something — it crosses a limit, or a breach is in progress (on-delay), or the signal has
      an open alarm — and those it inserted (new signals, or unknown ones: the caller's 422);
    - the signals with a sample older than their latest: those with several instants in the batch
      whose oldest is older; those with one instant that did not become the latest, unless equal
      to it (a signal's latest is read only there, so an in-order batch costs no extra read);
    - the clearing of the open stale conditions of the signals with a sample at or after `fresh_after`."""
    ahead = now + AHEAD_TRUSTED
    latest, definitions, alarms, stale = (
        _table(SignalLatest),
        _table(SignalDefinition),
        _table(Alarm),
        _table(StaleCondition),
    )
    cursor.execute(
        "WITH batch AS MATERIALIZED (SELECT * FROM "
        "unnest(%b::int8[], %b::timestamptz[], %b::float8[], %b::timestamptz[]) AS b(s, t, v, m)), "
        f"spread AS MATERIALIZED (SELECT b.s, l.time FROM batch b JOIN {latest} l ON l.signal_id = b.s "
        "WHERE b.m < b.t AND b.m < l.time AND NOT (l.time > %b AND b.t >= %b)), "
        f"upd AS (INSERT INTO {latest} AS l (signal_id, time, value, stale) SELECT s, t, v, false FROM batch "
        "ORDER BY s ON CONFLICT (signal_id) DO UPDATE SET time = excluded.time, value = excluded.value, "
        "stale = false WHERE l.time < excluded.time OR (l.time > %b AND excluded.time >= %b) "
        "RETURNING l.signal_id, l.value, l.breach_since, l.xmax = 0 AS inserted), "
        f"fresh AS (UPDATE {stale} SET cleared_at = %b WHERE cleared_at IS NULL "
        "AND signal_id IN (SELECT s FROM batch WHERE t >= %b)) "
        "SELECT upd.signal_id, NULL, CASE WHEN d.id IS NULL THEN 'u' WHEN upd.inserted THEN 'n' ELSE 'w' END "
        f"FROM upd LEFT JOIN {definitions} AS d ON d.id = upd.signal_id "
        "WHERE d.id IS NULL OR upd.inserted OR upd.value > d.alert OR upd.value > d.high_alert "
        "OR upd.value > d.trip OR upd.value < d.low_alert OR upd.breach_since IS NOT NULL OR upd.signal_id IN "
        f"(SELECT a.signal_id FROM {alarms} AS a WHERE a.state = ANY(%b::text[])) "
        "UNION ALL SELECT spread.s, spread.time, 'o' FROM spread "
        "UNION ALL SELECT one.s, one.time, 'o' FROM (SELECT b.s, b.t, "
        f"(SELECT l.time FROM {latest} l WHERE l.signal_id = b.s) AS time FROM batch b "
        "WHERE b.m = b.t AND b.s NOT IN (SELECT signal_id FROM upd)) AS one WHERE one.t < one.time",
        (
            Int8Array.of(signals.ids),
            TimestamptzArray.of(pg_microseconds(signals.newest_times)),
            Float8Array.of(signals.newest_values),
            TimestamptzArray.of(pg_microseconds(signals.oldest_times)),
            ahead,
            fresh_after,
            ahead,
            fresh_after,
            now,
            fresh_after,
            list(OPEN_ALARM_STATES),
        ),
    )
    found = _Found(watch=set(), unknown=set(), latest_before={})
    for signal_id, time, kind in cursor.fetchall():
        if kind == "o":
            found.latest_before[signal_id] = time
        elif kind == "u":
            found.unknown.add(signal_id)
        else:  # upserted and worth evaluating, or new (its first value is always evaluated)
            found.watch.add(signal_id)
    return found


# Portable (SQLite) -----------------------------------------------------------------------------


def _store_portable(samples: list[Sample], *, ahead: datetime, fresh_after: datetime) -> Stored:
    ids = {s[0] for s in samples}
    known = set(SignalDefinition.objects.filter(pk__in=id_list(sorted(ids))).values_list("pk", flat=True))
    if len(known) < len(ids):
        _refuse_unknown(samples, known)
    before = dict(SignalLatest.objects.filter(signal_id__in=id_list(sorted(ids))).values_list("signal_id", "time"))
    out_of_order = OutOfOrder()
    for index, (signal_id, time, _) in enumerate(samples):
        previous = before.get(signal_id)
        if previous is not None and time < previous and not (previous > ahead and time >= fresh_after):
            out_of_order.add(index)
    stored = _insert_portable(samples)
    _upsert_latest_portable(_newest(samples), ahead=ahead, fresh_after=fresh_after)
    return Stored(stored=stored, out_of_order=out_of_order, signal_ids=ids, watch=None)


def _insert_portable(samples: list[Sample]) -> int:
    """Chunked multi-row INSERTs skipping stored instants (and repeats earlier in the batch)."""
    table = _table(SignalSample)
    time_field = SignalSample._meta.get_field("time")
    stored = 0
    with connection.cursor() as cursor:
        for start in range(0, len(samples), 300):  # under SQLite's variable limit
            chunk = samples[start : start + 300]
            params: list[Any] = []
            for signal_id, time, value in chunk:
                params += [signal_id, time_field.get_db_prep_value(time, connection), value]
            placeholders = ", ".join(["(%s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (signal_id, time, value) VALUES {placeholders} "
                "ON CONFLICT (signal_id, time) DO NOTHING",
                params,
            )
            stored += cursor.rowcount
    return stored


def _upsert_latest_portable(newest: list[Sample], *, ahead: datetime, fresh_after: datetime) -> None:
    """SQLite ≥ 3.24 upsert, chunked under its variable limit. Keeps breach_since; fresh data
    ends staleness; an older sample never overwrites a newer one, unless the newer one is dated
    past `ahead` and the older one is fresh (at or after `fresh_after`)."""
    table = _table(SignalLatest)
    time_field = SignalLatest._meta.get_field("time")
    bounds = [time_field.get_db_prep_value(ahead, connection), time_field.get_db_prep_value(fresh_after, connection)]
    with connection.cursor() as cursor:
        for start in range(0, len(newest), 2000):
            chunk = newest[start : start + 2000]
            params: list[Any] = []
            for signal_id, time, value in chunk:
                params += [signal_id, time_field.get_db_prep_value(time, connection), value, False]
            placeholders = ", ".join(["(%s, %s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (signal_id, time, value, stale) VALUES {placeholders}"
                " ON CONFLICT (signal_id) DO UPDATE SET time = excluded.time, value = excluded.value,"
                f" stale = excluded.stale WHERE {table}.time < excluded.time"
                f" OR ({table}.time > %s AND excluded.time >= %s)",
                params + bounds,
            )
