"""Idempotency keys: the `Idempotency-Key` header and "once per caller and key".

A route that lets a client retry a write safely reads the header with `idempotency_key_check`
(absent → None; 1–200 visible ASCII characters, else a 422 `invalid_idempotency_key` naming
`Idempotency-Key`), runs the write through `once()`, and answers a replay with `replayed_response`
(header `Idempotent-Replayed: true`). The same key asking for something else is `key_reused`: a
409 `idempotency_key_reused` naming `Idempotency-Key`. Every route answers alike: the signals
ingest (`sentinel.services.ingest.samples_ingest_once`) and raising a work order by hand
(`workorders.services.manual_intake.work_order_raise`, also a capability whose plan step's key
makes a re-driven step raise once).

Where the key is remembered is the caller's: a row with a unique constraint on (caller, key), which
`write` inserts with its work. `earlier` reads it (one query) and says what was done, or raises
`key_reused`; `once` adds no query of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.http import JsonResponse

from core.errors import Conflict, InvalidInput

IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
IDEMPOTENCY_KEY_MAX = 200
INVALID_KEY = "invalid_idempotency_key"
KEY_REUSED = "idempotency_key_reused"

T = TypeVar("T")


def idempotency_key_check(raw: str | None) -> str | None:
    """The `Idempotency-Key` header: absent → None; 1–200 visible ASCII characters, else a 422."""
    if raw is None:
        return None
    key = raw.strip()
    if not key or len(key) > IDEMPOTENCY_KEY_MAX or not key.isascii() or not key.isprintable():
        raise InvalidInput(
            f"{IDEMPOTENCY_HEADER}: must be 1–{IDEMPOTENCY_KEY_MAX} visible ASCII characters",
            field=IDEMPOTENCY_HEADER,
            code=INVALID_KEY,
        )
    return key


def key_reused(message: str, **extra: Any) -> Conflict:
    """The 409 for a key already used for a different request (`extra`: e.g. the earlier object's id)."""
    return Conflict(message, field=IDEMPOTENCY_HEADER, code=KEY_REUSED, **extra)


def once(*, earlier: Callable[[], T | None], write: Callable[[], T]) -> tuple[T, bool]:
    """Run `write` once per caller and key; returns (result, replayed).

    `earlier()` is what a first request with this key did (None: nothing yet), or raises
    `key_reused` when this request asks for something else. `write()` does the work and records
    the key in the same transaction, under a unique constraint: a concurrent duplicate that passed
    the first look loses on it, its writes roll back, and it answers with the winner's result."""
    found = earlier()
    if found is not None:
        return found, True
    try:
        with transaction.atomic():
            result = write()
    except IntegrityError:
        found = earlier()
        if found is None:
            raise
        return found, True
    return result, False


def replayed_response(data: dict[str, Any], *, status: int = 200) -> JsonResponse:
    """The answer to a replayed request: the first answer, marked `Idempotent-Replayed: true`."""
    reply = JsonResponse(data, status=status)
    reply[REPLAYED_HEADER] = "true"
    return reply
