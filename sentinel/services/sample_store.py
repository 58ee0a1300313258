"""Writing a validated batch of samples: the history rows, the latest-value rows, and what the
batch told about order and duplicates. Ingest (`sentinel.services.ingest`) calls `samples_store`
inside its transaction; nothing else writes samples.

PostgreSQL, in a fixed handful of statements whatever the batch size, with no value sent twice
and no timestamp read back into Python:
1. one binary COPY of the batch into a temporary staging table (`ON COMMIT DROP`);
2. one read: the first item whose signal does not exist (a 422, nothing written), the signals
   without a latest value yet, and the samples older than their signal's latest (out of order);
3. `INSERT … SELECT … ORDER BY s, t, i ON CONFLICT (signal_id, time) DO NOTHING` into the samples
   (the first value for an instant wins; the rest are counted as duplicates; rows go in index
   order, so two batches sharing instants wait on each other in one order, never in a cycle);
4. one upsert of each signal's newest staged value (`ON CONFLICT … WHERE latest.time <
   excluded.time`, rows in signal order — the lock order of docs/KERNEL.md) returning the signals
   whose new value can change something (a limit crossed, a breach in progress, an open alarm);
5. one UPDATE clearing the open stale conditions of signals with a fresh sample.
Elsewhere (SQLite): the same rules in portable chunked statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from core.errors import InvalidInput
from sentinel.choices import OPEN_ALARM_STATES
from sentinel.models import Alarm, SignalDefinition, SignalLatest, SignalSample, StaleCondition
from sentinel.services.evaluation import id_list

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
    stored = _store_portable(samples)
    returning = sorted({s for s, t, _ in samples if t >= fresh_after})
    if returning:
        StaleCondition.objects.filter(signal_id__in=id_list(returning), cleared_at__isnull=True).update(cleared_at=now)
    return stored


# PostgreSQL ------------------------------------------------------------------------------------


def _table(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


STAGE = "aria_ingest_stage"


def _store_postgresql(samples: list[Sample], *, now: datetime, fresh_after: datetime) -> Stored:
    # Raw psycopg on Django's connection: one binary COPY of the batch, then set-based statements
    # over the staging table, so no value travels twice and no timestamp comes back to Python.
    import psycopg

    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(f"CREATE TEMP TABLE {STAGE} (i int4, s int8, t timestamptz, v float8) ON COMMIT DROP")
        with cursor.copy(f"COPY {STAGE} (i, s, t, v) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["int4", "int8", "timestamptz", "float8"])
            for index, (signal_id, time, value) in enumerate(samples):
                copy.write_row((index, signal_id, time, value))
        first_unknown, new, late = _inspect(cursor)
        if first_unknown is not None:
            raise unknown_signal(first_unknown, samples[first_unknown][0])
        cursor.execute(
            f"INSERT INTO {_table(SignalSample)} (signal_id, time, value) SELECT s, t, v FROM {STAGE} ORDER BY s, t, i "
            "ON CONFLICT (signal_id, time) DO NOTHING"
        )
        stored = cursor.rowcount
        watch = _upsert_latest_postgresql(cursor)
        cursor.execute(
            f"UPDATE {_table(StaleCondition)} SET cleared_at = %s WHERE cleared_at IS NULL "
            f"AND signal_id IN (SELECT s FROM {STAGE} WHERE t >= %s)",
            (now, fresh_after),
        )
        cursor.execute(f"DROP TABLE {STAGE}")  # a second batch in the same transaction stages its own
    out_of_order = OutOfOrder(count=late[0], indices=late[1])
    signal_ids = {s[0] for s in samples}
    return Stored(stored=stored, out_of_order=out_of_order, signal_ids=signal_ids, watch=watch | set(new))


def _inspect(cursor: Any) -> tuple[int | None, list[int], tuple[int, list[int]]]:
    """One read before writing: the first item whose signal does not exist, the signals without a
    latest value yet, and the samples older than their signal's latest (count, first indices)."""
    latest, signals = _table(SignalLatest), _table(SignalDefinition)
    cursor.execute(
        f"WITH new AS (SELECT DISTINCT s FROM {STAGE} st WHERE NOT EXISTS "
        f"(SELECT 1 FROM {latest} l WHERE l.signal_id = st.s)), "
        f"late AS (SELECT st.i FROM {STAGE} st JOIN {latest} l ON l.signal_id = st.s WHERE st.t < l.time) "
        f"SELECT (SELECT min(st.i) FROM {STAGE} st JOIN new ON new.s = st.s "
        f"WHERE NOT EXISTS (SELECT 1 FROM {signals} d WHERE d.id = st.s)), "
        "ARRAY(SELECT s FROM new), (SELECT count(*) FROM late), "
        f"ARRAY(SELECT i FROM late ORDER BY i LIMIT {MAX_OUT_OF_ORDER_INDICES})"
    )
    first_unknown, new, late_count, late_first = cursor.fetchone()
    return first_unknown, new, (late_count, late_first)


def _upsert_latest_postgresql(cursor: Any) -> set[int]:
    """Upsert each signal's newest staged sample (the first value of a repeated instant; never over
    a newer one; fresh data ends staleness), rows taken in signal order — the lock order of
    docs/KERNEL.md. Returns the updated signals whose new value can change something: it crosses
    a limit, or a breach is in progress (on-delay), or the signal has an open alarm."""
    latest, signals, alarms = _table(SignalLatest), _table(SignalDefinition), _table(Alarm)
    cursor.execute(
        f"WITH upd AS (INSERT INTO {latest} AS l (signal_id, time, value, stale) "
        f"SELECT s, t, v, false FROM (SELECT DISTINCT ON (s) s, t, v FROM {STAGE} ORDER BY s, t DESC, i) AS n "
        "ORDER BY s "
        "ON CONFLICT (signal_id) DO UPDATE SET time = excluded.time, value = excluded.value, stale = false "
        "WHERE l.time < excluded.time RETURNING l.signal_id, l.value, l.breach_since) "
        f"SELECT upd.signal_id FROM upd JOIN {signals} AS d ON d.id = upd.signal_id "
        "WHERE upd.value > d.alert OR upd.value > d.high_alert OR upd.value > d.trip OR upd.value < d.low_alert "
        "OR upd.breach_since IS NOT NULL OR EXISTS "
        f"(SELECT 1 FROM {alarms} AS a WHERE a.signal_id = upd.signal_id AND a.state = ANY(%b::text[]))",
        (list(OPEN_ALARM_STATES),),
    )
    return {row[0] for row in cursor.fetchall()}


# Portable (SQLite) -----------------------------------------------------------------------------


def _store_portable(samples: list[Sample]) -> Stored:
    ids = {s[0] for s in samples}
    known = set(SignalDefinition.objects.filter(pk__in=id_list(sorted(ids))).values_list("pk", flat=True))
    if len(known) < len(ids):
        _refuse_unknown(samples, known)
    before = dict(SignalLatest.objects.filter(signal_id__in=id_list(sorted(ids))).values_list("signal_id", "time"))
    out_of_order = OutOfOrder()
    for index, (signal_id, time, _) in enumerate(samples):
        previous = before.get(signal_id)
        if previous is not None and time < previous:
            out_of_order.add(index)
    stored = _insert_portable(samples)
    _upsert_latest_portable(_newest(samples))
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


def _upsert_latest_portable(newest: list[Sample]) -> None:
    """SQLite ≥ 3.24 upsert, chunked under its variable limit. Keeps breach_since; fresh data
    ends staleness; an older sample never overwrites a newer one."""
    table = _table(SignalLatest)
    time_field = SignalLatest._meta.get_field("time")
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
                f" stale = excluded.stale WHERE {table}.time < excluded.time",
                params,
            )
