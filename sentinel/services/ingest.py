"""Sample ingestion: validate the whole batch, write it, keep the latest values, evaluate.

All or nothing: one bad item rejects the request (422 naming the item index and field) and
nothing is written. Accepted samples are evaluated at once, so detection never waits for the
scan. A sample whose (signal, time) is already stored is a duplicate: it is counted, not stored
again, and never changes the latest value (the first value for an instant wins). On PostgreSQL
the samples go in as three binary arrays (`INSERT … SELECT unnest(…) ON CONFLICT DO NOTHING`);
elsewhere as chunked multi-row INSERTs with the same conflict rule.

A batch posted with an `Idempotency-Key` (`samples_ingest_once`) is stored once per caller and
key: a retry is answered with the first response; the key with a different body is a 409.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.errors import Conflict, InvalidInput, PayloadTooLarge
from sentinel.choices import OPEN_ALARM_STATES
from sentinel.metrics import ingest_observe
from sentinel.models import Alarm, IngestBatch, SignalDefinition, SignalLatest, SignalSample, StaleCondition
from sentinel.services.evaluation import EvaluationSummary, id_list, signals_evaluate

MAX_SAMPLES = 10_000
MAX_FUTURE = timedelta(minutes=5)
STALE_INTERVALS = 3
MAX_OUT_OF_ORDER_INDICES = 100  # the response names at most this many; the count is always exact

Sample = tuple[int, datetime, float]


@dataclass
class OutOfOrder:
    """Samples older than their signal's latest stored sample: kept as history, never evaluated
    (only a signal's newest value raises, escalates or clears), so a late gateway sees why."""

    count: int = 0
    indices: list[int] = field(default_factory=list)  # batch positions, the first MAX_OUT_OF_ORDER_INDICES


@dataclass
class IngestResult:
    accepted: int
    signals: int
    evaluation: EvaluationSummary
    out_of_order: OutOfOrder = field(default_factory=OutOfOrder)
    duplicates: int = 0  # samples whose (signal, time) was already stored: not stored again


def _invalid(index: int, field: str | None, message: str) -> InvalidInput:
    path = f"samples[{index}].{field}" if field else f"samples[{index}]"
    dotted = f"samples.{index}.{field}" if field else f"samples.{index}"
    return InvalidInput(f"{path}: {message}", field=dotted, index=index)


def _time(index: int, raw: Any, latest_allowed: datetime) -> datetime:
    if isinstance(raw, datetime):
        value = raw
    elif isinstance(raw, str):
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            raise _invalid(index, "time", "must be an ISO 8601 date-time") from None
    else:
        raise _invalid(index, "time", "must be an ISO 8601 date-time string")
    if value.tzinfo is None or value.utcoffset() is None:
        raise _invalid(index, "time", "must include a timezone (e.g. 2026-01-01T00:00:00Z)")
    if value > latest_allowed:
        raise _invalid(index, "time", "is more than 5 minutes in the future")
    return value


def samples_validate(items: Any, *, now: datetime | None = None) -> list[Sample]:
    """Parse and check every item (without the database); raise InvalidInput on the first bad one."""
    if not isinstance(items, list):
        raise InvalidInput("samples: must be a list", field="samples")
    if len(items) > MAX_SAMPLES:
        raise PayloadTooLarge(f"samples: at most {MAX_SAMPLES} per request (got {len(items)})", field="samples")
    latest_allowed = (now or timezone.now()) + MAX_FUTURE
    parsed: list[Sample] = []
    append = parsed.append
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _invalid(index, None, "must be an object with signal_id, time, value")
        for name in ("signal_id", "time", "value"):
            if name not in item or item[name] is None:
                raise _invalid(index, name, "is required")
        signal_id, value = item["signal_id"], item["value"]
        if type(signal_id) is not int:
            raise _invalid(index, "signal_id", "must be an integer")
        if type(value) not in (float, int):
            raise _invalid(index, "value", "must be a number")
        value = float(value)
        if not math.isfinite(value):
            raise _invalid(index, "value", "must be finite")
        append((signal_id, _time(index, item["time"], latest_allowed), value))
    return parsed


def _check_signals_exist(samples: list[Sample]) -> None:
    """An unknown signal is a 422 naming its item (checked before anything is written)."""
    ids = list({s[0] for s in samples})
    if connection.vendor == "postgresql":
        import psycopg

        table = connection.ops.quote_name(SignalDefinition._meta.db_table)
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(f"SELECT count(*) FROM {table} WHERE id = ANY(%b::bigint[])", (ids,))
            if cursor.fetchone()[0] == len(ids):
                return
    known = set(SignalDefinition.objects.filter(pk__in=id_list(ids)).values_list("pk", flat=True))
    for index, (signal_id, _, _) in enumerate(samples):
        if signal_id not in known:
            raise _invalid(index, "signal_id", f"unknown signal {signal_id}")


def _out_of_order(samples: list[Sample]) -> OutOfOrder:
    """The batch's samples strictly older than the latest sample stored before this batch."""
    ids = {s[0] for s in samples}
    latest = dict(SignalLatest.objects.filter(signal_id__in=id_list(sorted(ids))).values_list("signal_id", "time"))
    result = OutOfOrder()
    if not latest:
        return result
    for index, (signal_id, time, _) in enumerate(samples):
        stored = latest.get(signal_id)
        if stored is not None and time < stored:
            result.count += 1
            if len(result.indices) < MAX_OUT_OF_ORDER_INDICES:
                result.indices.append(index)
    return result


def _insert_samples(samples: list[Sample]) -> int:
    """Store the samples, skipping any whose (signal, time) is stored already (or earlier in the
    batch). Returns how many were stored."""
    table = connection.ops.quote_name(SignalSample._meta.db_table)
    conflict = "ON CONFLICT (signal_id, time) DO NOTHING"
    if connection.vendor == "postgresql":
        import psycopg

        columns = list(zip(*samples, strict=True))
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(
                f"INSERT INTO {table} (signal_id, time, value) "
                f"SELECT * FROM unnest(%b::bigint[], %b::timestamptz[], %b::float8[]) {conflict}",
                (list(columns[0]), list(columns[1]), list(columns[2])),
            )
            return cursor.rowcount
    time_field = SignalSample._meta.get_field("time")
    stored = 0
    with connection.cursor() as cursor:
        for start in range(0, len(samples), 300):  # under SQLite's variable limit
            chunk = samples[start : start + 300]
            params: list[Any] = []
            for signal_id, time, value in chunk:
                params += [signal_id, time_field.get_db_prep_value(time, connection), value]
            placeholders = ", ".join(["(%s, %s, %s)"] * len(chunk))
            cursor.execute(f"INSERT INTO {table} (signal_id, time, value) VALUES {placeholders} {conflict}", params)
            stored += cursor.rowcount
    return stored


def _upsert_latest(samples: list[Sample]) -> tuple[set[int], set[int] | None]:
    """One row per signal holding its newest sample; an older sample never overwrites a newer one.

    Returns the signals in the batch, and (on PostgreSQL, decided by the database in the same
    statement) the ones whose new value can change something: it crosses a threshold, or the
    signal has an open alarm or a breach in progress (on-delay), or its row is new. None means
    "evaluate them all"."""
    newest: dict[int, tuple[datetime, float]] = {}
    for signal_id, time, value in samples:
        current = newest.get(signal_id)
        if current is None or time > current[0]:  # a duplicate instant keeps the first value
            newest[signal_id] = (time, value)
    table = connection.ops.quote_name(SignalLatest._meta.db_table)
    rows = sorted(newest.items())
    values = {signal_id: value for signal_id, (_, value) in rows}
    if connection.vendor == "postgresql":
        watch = _upsert_latest_postgresql(
            table, [r[0] for r in rows], [r[1][0] for r in rows], [float(r[1][1]) for r in rows]
        )
        return set(values), watch
    # SQLite ≥ 3.24 upsert, chunked under its variable limit. Keeps breach_since; fresh data
    # ends staleness; an older sample never overwrites a newer one.
    time_field = SignalLatest._meta.get_field("time")
    with connection.cursor() as cursor:
        for start in range(0, len(rows), 2000):
            chunk = rows[start : start + 2000]
            params: list[Any] = []
            for signal_id, (time, value) in chunk:
                params += [signal_id, time_field.get_db_prep_value(time, connection), value, False]
            placeholders = ", ".join(["(%s, %s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (signal_id, time, value, stale) VALUES {placeholders}"
                " ON CONFLICT (signal_id) DO UPDATE SET time = excluded.time, value = excluded.value,"
                f" stale = excluded.stale WHERE {table}.time < excluded.time",
                params,
            )
    return set(values), None


def _upsert_latest_postgresql(table: str, ids: list[int], times: list[datetime], values: list[float]) -> set[int]:
    """UPDATE … FROM unnest() for the signals that have a row (the usual case: cheaper than a
    speculative INSERT per row), then an upsert for the new ones. Arrays travel as three binary
    parameters on a server-binding cursor (Django's client-side binding would spell out 15,000
    literals)."""
    import psycopg

    source = "unnest(%b::bigint[], %b::timestamptz[], %b::float8[]) AS u(s, t, v)"
    alarms = connection.ops.quote_name(Alarm._meta.db_table)
    signals = connection.ops.quote_name(SignalDefinition._meta.db_table)
    params = (ids, times, values)
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        # Latest rows are locked in signal order first: an UPDATE … FROM join locks in whatever order
        # the planner picks, and two overlapping batches could then deadlock (lock order: docs/KERNEL.md).
        cursor.execute(
            f"SELECT 1 FROM {table} WHERE signal_id = ANY(%b::bigint[]) ORDER BY signal_id FOR UPDATE", (ids,)
        )
        cursor.execute(
            f"WITH upd AS (UPDATE {table} AS l SET time = u.t, value = u.v, stale = false FROM {source} "
            "WHERE l.signal_id = u.s AND l.time < u.t RETURNING l.signal_id, l.value, l.breach_since) "
            f"SELECT upd.signal_id FROM upd JOIN {signals} AS d ON d.id = upd.signal_id "
            "WHERE upd.value > d.alert OR upd.value > d.high_alert OR upd.value > d.trip OR upd.value < d.low_alert "
            "OR upd.breach_since IS NOT NULL OR EXISTS "
            f"(SELECT 1 FROM {alarms} AS a WHERE a.signal_id = upd.signal_id AND a.state = ANY(%b::text[]))",
            (*params, list(OPEN_ALARM_STATES)),
        )
        watch = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            f"INSERT INTO {table} AS l (signal_id, time, value, stale) SELECT u.s, u.t, u.v, false FROM {source} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} AS e WHERE e.signal_id = u.s) "
            "ON CONFLICT (signal_id) DO UPDATE SET time = excluded.time, value = excluded.value, stale = false "
            "WHERE l.time < excluded.time RETURNING l.signal_id",
            params,
        )
        watch.update(row[0] for row in cursor.fetchall())
    return watch


def stale_window() -> timedelta:
    return timedelta(seconds=STALE_INTERVALS * float(settings.ARIA_SENTINEL_INTERVAL))


def samples_ingest(
    *, samples: Sequence[Any], actor: AbstractBaseUser | None = None, now: datetime | None = None
) -> IngestResult:
    """Validate, store and evaluate a batch of samples ({signal_id, time, value} dicts or
    already-validated (signal_id, time, value) tuples). `actor` is accepted for the audit
    trail of callers; samples themselves are data, not transitions, and are not audited."""
    now = now or timezone.now()
    parsed = (
        list(samples)
        if samples and isinstance(samples[0], tuple)
        else samples_validate(list(samples) if not isinstance(samples, list) else samples, now=now)
    )
    if not parsed:
        return IngestResult(accepted=0, signals=0, evaluation=EvaluationSummary())
    with transaction.atomic():
        _check_signals_exist(parsed)
        out_of_order = _out_of_order(parsed)
        stored = _insert_samples(parsed)
        signal_ids, watch = _upsert_latest(parsed)
        fresh_after = now - stale_window()
        returning = sorted({s for s, t, _ in parsed if t >= fresh_after})
        if returning:
            StaleCondition.objects.filter(signal_id__in=id_list(returning), cleared_at__isnull=True).update(
                cleared_at=now
            )
        evaluation = signals_evaluate(now=now, signal_ids=signal_ids if watch is None else watch)
    ingest_observe(parsed)
    return IngestResult(
        accepted=len(parsed),
        signals=len(signal_ids),
        evaluation=evaluation,
        out_of_order=out_of_order,
        duplicates=len(parsed) - stored,
    )


IDEMPOTENCY_KEY_MAX = 200


def idempotency_key_check(raw: str | None) -> str | None:
    """The `Idempotency-Key` header: absent → None; 1–200 visible ASCII characters, else a 422."""
    if raw is None:
        return None
    key = raw.strip()
    if not key or len(key) > IDEMPOTENCY_KEY_MAX or not key.isascii() or not key.isprintable():
        raise InvalidInput(
            f"Idempotency-Key: must be 1–{IDEMPOTENCY_KEY_MAX} visible ASCII characters",
            field="Idempotency-Key",
            code="invalid_idempotency_key",
        )
    return key


def samples_ingest_once(
    *, key: str, actor: AbstractBaseUser, body: bytes, ingest: Callable[[], dict[str, Any]]
) -> tuple[dict[str, Any], bool]:
    """Run `ingest` (which stores the batch and returns the response) once per caller and key.

    Returns (response, replayed). A retry gets the first response and stores nothing; a
    concurrent duplicate loses on the unique constraint, its writes roll back, and it answers
    with the winner's response. The same key with a different body is a 409."""
    fingerprint = hashlib.sha256(body).hexdigest()

    def replay() -> tuple[dict[str, Any], bool] | None:
        batch = IngestBatch.objects.filter(user=actor, key=key).first()
        if batch is None:
            return None
        if batch.fingerprint != fingerprint:
            raise Conflict(
                "Idempotency-Key was already used for a different batch.",
                field="Idempotency-Key",
                code="idempotency_key_reused",
            )
        return batch.response, True

    earlier = replay()
    if earlier is not None:
        return earlier
    try:
        with transaction.atomic():
            response = ingest()
            IngestBatch.objects.create(user=actor, key=key, fingerprint=fingerprint, response=response)
    except IntegrityError:
        earlier = replay()
        if earlier is None:
            raise
        return earlier
    return response, False
