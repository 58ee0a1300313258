"""Sample ingestion: validate the whole batch, write it, keep the latest values, evaluate.

All or nothing: one bad item rejects the request (422 naming the item index and field) and
nothing is written. Accepted samples are evaluated at once, so detection never waits for the
scan. A sample whose (signal, time) is already stored is a duplicate: it is counted, not stored
again, and never changes the latest value (the first value for an instant wins). The writes
themselves (COPY, staging, the latest-value upsert) are in `sentinel.services.sample_store`.

A request body is decoded by msgspec straight into (signal_id, time, value) when it is well
formed (`samples_decode`); anything else goes through the checking parser (`samples_validate`),
which names the first bad item and field, so both give the same answer.

A batch posted with an `Idempotency-Key` (`samples_ingest_once`, on `core.idempotency.once`) is
stored once per caller and key: a retry is answered with the first response; the key with a
different body is a 409.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import Any

import msgspec
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.errors import InvalidInput, PayloadTooLarge
from core.idempotency import key_reused, once
from sentinel.metrics import ingest_observe
from sentinel.models import IngestBatch
from sentinel.services.evaluation import EvaluationSummary, signals_evaluate
from sentinel.services.sample_store import OutOfOrder, Sample, samples_store

MAX_SAMPLES = 10_000
# The largest magnitude a sample may carry. No process value comes near it (a totaliser in Wh
# reaches 1e12 after a century at 1 MW); a value past it is a gateway's garbage, and stored it
# would overflow the history's sums (a 1-minute average of 1.7e308 is +inf: the rollup of every
# signal and the trend query failed, the chart showed NaN).
MAX_MAGNITUDE = 1e15
MAX_FUTURE = timedelta(minutes=5)
STALE_INTERVALS = 3
BIGINT = 2**63
# The earliest time stored: a time in year 1 with a positive offset is before datetime.min in UTC,
# and converting it for the database would overflow (a 500 instead of a 422).
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)


@dataclass
class IngestResult:
    accepted: int
    signals: int
    evaluation: EvaluationSummary
    out_of_order: OutOfOrder = field(default_factory=OutOfOrder)
    duplicates: int = 0  # samples whose (signal, time) was already stored: not stored again


def value_in_range(value: float) -> bool:
    """Finite and within ±MAX_MAGNITUDE (NaN is not)."""
    return -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE


VALUE_RANGE = f"must be a finite number within ±{MAX_MAGNITUDE:g}"


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
    if value < EARLIEST:
        raise _invalid(index, "time", "is out of range (before 0001-01-02)")
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
        if not -BIGINT <= signal_id < BIGINT:
            raise _invalid(index, "signal_id", f"unknown signal {signal_id}")
        if type(value) not in (float, int):
            raise _invalid(index, "value", "must be a number")
        try:
            value = float(value)
        except OverflowError:  # an integer beyond any float
            value = math.inf
        if not math.isfinite(value):
            raise _invalid(index, "value", "must be finite")
        if not value_in_range(value):
            raise _invalid(index, "value", VALUE_RANGE)
        append((signal_id, _time(index, item["time"], latest_allowed), value))
    return parsed


class _Item(msgspec.Struct, gc=False):  # ints, a str and a float: nothing for the GC to follow
    signal_id: int
    time: str  # parsed by datetime.fromisoformat below, exactly as samples_validate does
    value: float


class _Body(msgspec.Struct):
    samples: list[_Item]


_BODY = msgspec.json.Decoder(_Body)
_SIGNAL_ID, _TIME, _VALUE, _TZINFO = map(attrgetter, ("signal_id", "time", "value", "tzinfo"))


def samples_decode(body: bytes, *, now: datetime | None = None) -> list[Sample] | None:
    """The samples of a well-formed request body, parsed and checked in one pass (msgspec in C,
    then one fromisoformat per time, the checks as whole-list operations in C); None when anything
    is off — missing or null fields, wrong types, a naive or future time, NaN, too many items, not
    JSON — so the caller runs the checking parser, which names the problem. Accepts nothing
    `samples_validate` would refuse."""
    try:
        items = _BODY.decode(body).samples
    except (msgspec.DecodeError, UnicodeDecodeError):  # not JSON, or not UTF-8
        return None
    if len(items) > MAX_SAMPLES:
        return None
    if not items:
        return []
    try:
        times = list(map(datetime.fromisoformat, map(_TIME, items)))
    except ValueError:
        return None
    if None in map(_TZINFO, times):  # a naive time (fromisoformat's offsets are fixed: never None)
        return None
    if max(times) > (now or timezone.now()) + MAX_FUTURE or min(times) < EARLIEST:
        return None
    signal_ids = list(map(_SIGNAL_ID, items))
    if min(signal_ids) < -BIGINT or max(signal_ids) >= BIGINT:
        return None
    values = list(map(_VALUE, items))
    # A sum is finite only if every term is; a finite sum may overflow: then look at each.
    if not math.isfinite(sum(values)) and not all(map(math.isfinite, values)):
        return None
    if max(values) > MAX_MAGNITUDE or min(values) < -MAX_MAGNITUDE:
        return None
    return list(zip(signal_ids, times, values, strict=True))


def stale_window() -> timedelta:
    return timedelta(seconds=STALE_INTERVALS * float(settings.ARIA_SENTINEL_INTERVAL))


def samples_ingest(
    *, samples: Sequence[Any], actor: AbstractBaseUser | None = None, now: datetime | None = None
) -> IngestResult:
    """Validate, store and evaluate a batch of samples ({signal_id, time, value} dicts or
    already-validated (signal_id, time, value) tuples). `actor` is accepted for the audit
    trail of callers; samples themselves are data, not transitions, and are not audited."""
    now = now or timezone.now()
    if samples and isinstance(samples[0], tuple):
        parsed = list(samples)
        _refuse_out_of_range(parsed)
    else:
        parsed = samples_validate(list(samples) if not isinstance(samples, list) else samples, now=now)
    if not parsed:
        return IngestResult(accepted=0, signals=0, evaluation=EvaluationSummary())
    with transaction.atomic():
        written = samples_store(parsed, now=now, fresh_after=now - stale_window())
        evaluation = signals_evaluate(
            now=now, signal_ids=written.signal_ids if written.watch is None else written.watch
        )
    ingest_observe(parsed)
    return IngestResult(
        accepted=len(parsed),
        signals=len(written.signal_ids),
        evaluation=evaluation,
        out_of_order=written.out_of_order,
        duplicates=len(parsed) - written.stored,
    )


def _refuse_out_of_range(samples: list[Sample]) -> None:
    """Already-parsed samples (a connector's) are checked for range too: a 422 naming the first.
    A time before EARLIEST would overflow on its way to the database (an OverflowError, not a 422:
    a connector's batch that raised it stayed at the head of its backlog and blocked the rest)."""
    times = [sample[1] for sample in samples]
    if min(times) < EARLIEST:
        raise _invalid(
            next(i for i, t in enumerate(times) if t < EARLIEST), "time", "is out of range (before 0001-01-02)"
        )
    values = [sample[2] for sample in samples]
    # A NaN or an infinity makes the sum non-finite; with every value finite, max and min are exact.
    if math.isfinite(sum(values)) and max(values) <= MAX_MAGNITUDE and min(values) >= -MAX_MAGNITUDE:
        return
    index = next(i for i, value in enumerate(values) if not value_in_range(value))
    raise _invalid(index, "value", VALUE_RANGE)


# How long a batch key is remembered. A retry comes within seconds or minutes; one later than this
# is stored as new, and its samples, already stored, are counted as duplicates and change nothing.
IDEMPOTENCY_KEY_TTL = timedelta(hours=24)
INGEST_BATCHES_PRUNED_PER_RUN = 50_000


def ingest_batches_prune(*, now: datetime | None = None) -> int:
    """Forget batch keys older than IDEMPOTENCY_KEY_TTL, a bounded number per run (the history
    upkeep beat task calls it): a gateway posting a keyed batch every second kept 86,400 rows a day
    for ever. Returns how many were deleted."""
    cutoff = (now or timezone.now()) - IDEMPOTENCY_KEY_TTL
    old = IngestBatch.objects.filter(created_at__lt=cutoff).order_by("created_at")
    ids = list(old.values_list("pk", flat=True)[:INGEST_BATCHES_PRUNED_PER_RUN])
    return IngestBatch.objects.filter(pk__in=ids).delete()[0] if ids else 0


def samples_ingest_once(
    *, key: str, actor: AbstractBaseUser, body: bytes, ingest: Callable[[], dict[str, Any]]
) -> tuple[dict[str, Any], bool]:
    """Run `ingest` (which stores the batch and returns the response) once per caller and key.

    Returns (response, replayed). A retry gets the first response and stores nothing; a
    concurrent duplicate loses on the unique constraint, its writes roll back, and it answers
    with the winner's response. The same key with a different body is a 409."""
    fingerprint = hashlib.sha256(body).hexdigest()

    def earlier() -> dict[str, Any] | None:
        batch = IngestBatch.objects.filter(user_id=actor.pk, key=key).first()
        if batch is None:
            return None
        if batch.fingerprint != fingerprint:
            raise key_reused("Idempotency-Key was already used for a different batch.")
        return batch.response

    def write() -> dict[str, Any]:
        response = ingest()
        IngestBatch.objects.create(user_id=actor.pk, key=key, fingerprint=fingerprint, response=response)
        return response

    return once(earlier=earlier, write=write)
