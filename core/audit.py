"""The audit trail: append-only records, linked into a hash chain by a sealer after they commit.

Writing never locks the chain. `audit_record` / `audit_record_many` insert their rows UNSEALED (no
chain position, null hashes) in the caller's transaction: a record exists iff the change it records
committed, and an audited write waits for no other audited write. (It used to lock the chain's last
row until commit, so any path that locked an earlier kind of row after auditing could deadlock with
one that held that row and then audited.)

`audit_seal()` links committed unsealed rows into the chain in a short transaction of its own that
holds one lock: the `AuditChainHead` row (pk 1, the last position and hash). A one-row table rather
than the chain's last record or a PostgreSQL advisory lock: it exists while the chain is empty, it
locks the same way on SQLite (IMMEDIATE transactions serialise writers) as on PostgreSQL, and it is
the cursor — no MAX() scan, and verification can tell when the sealed tail was cut off. It takes the
unsealed rows in id order, gives each the next position (`seal`), `previous_hash` and `hash`, and
saves. The chain's order is the seal order: a row with a lower id that commits later is sealed
later, so verification walks by `seal`, never by id.

Sealing runs (a) on commit of every transaction that audited (once per transaction), so rows are
normally sealed within milliseconds, and (b) from the sweeper (`core.sweep`, reaper
`core.audit_seal`) for rows a crash left between commit and on-commit: lost work is re-driven.

Tamper window: an unsealed row carries no hash, so whoever can write the table can change it
undetectably until it is sealed — normally milliseconds after commit, at most one sweep interval
(ARIA_SWEEP_INTERVAL) after a crash. `audit_check()` reports the unsealed rows and the oldest's age.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone

from core.access import stored_user
from core.models import AuditChainHead, AuditRecord

logger = logging.getLogger(__name__)

HEAD_PK = 1
SEAL_BATCH = 500  # rows linked per sealing transaction: the head's lock is held this long at most


def _digest(*, previous_hash: str, record: AuditRecord) -> str:
    body = json.dumps(
        [
            previous_hash,
            record.actor_label,
            record.action,
            record.target_type,
            record.target_id,
            record.details,
            record.created_at.isoformat(),
        ],
        sort_keys=True,
        cls=DjangoJSONEncoder,
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass(frozen=True)
class AuditEntry:
    """One record to append with `audit_record_many` (same fields as `audit_record`)."""

    actor: AbstractBaseUser | AnonymousUser | None
    action: str
    target_type: str
    target_id: Any
    details: dict[str, Any] | None = None


def _unsealed(entry: AuditEntry, created_at: datetime) -> AuditRecord:
    """The unsaved, unsealed record for `entry`."""
    details = json.loads(json.dumps(entry.details or {}, cls=DjangoJSONEncoder))
    actor = entry.actor
    actor_label = actor.get_username() if actor is not None and actor.is_authenticated else "system"
    return AuditRecord(
        actor=stored_user(actor),
        actor_label=actor_label,
        action=entry.action,
        target_type=entry.target_type,
        target_id=str(entry.target_id),
        details=details,
        created_at=created_at,
    )


def _seal_on_commit() -> None:
    """Seal once the caller's transaction commits (at once outside one); once per transaction."""
    pending = getattr(transaction.get_connection(), "run_on_commit", [])
    if not any(_seal_committed in callback for callback in pending):  # (savepoints, func, robust)
        transaction.on_commit(_seal_committed)


def _seal_committed() -> None:
    try:
        audit_seal()
    except Exception:  # the business change is committed; the sweeper seals what is left
        logger.warning("Audit sealing failed; the sweeper will seal the rows left", exc_info=True)


def audit_record(
    *,
    actor: AbstractBaseUser | AnonymousUser | None,
    action: str,
    target_type: str,
    target_id: Any,
    details: dict[str, Any] | None = None,
) -> AuditRecord:
    """Append one record (unsealed, one INSERT, no lock) in the caller's transaction."""
    record = _unsealed(AuditEntry(actor, action, target_type, target_id, details), timezone.now())
    record.save()
    _seal_on_commit()
    return record


def audit_record_many(entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """Append several records in order (ascending ids, so they are sealed in this order), in the
    caller's transaction, with one INSERT: the bulk transitions (core.transitions) use it."""
    if not entries:
        return []
    created_at = timezone.now()
    records = AuditRecord.objects.bulk_create([_unsealed(entry, created_at) for entry in entries])
    _seal_on_commit()
    return records


def _head_locked() -> AuditChainHead:
    """The chain head, locked until the sealing transaction ends (created from the chain if missing)."""
    head = AuditChainHead.objects.select_for_update().filter(pk=HEAD_PK).first()
    if head is None:
        last = AuditRecord.objects.filter(seal__isnull=False).order_by("-seal").only("seal", "hash").first()
        defaults = {"seal": last.seal, "hash": last.hash} if last else {"seal": 0, "hash": ""}
        AuditChainHead.objects.get_or_create(pk=HEAD_PK, defaults=defaults)
        head = AuditChainHead.objects.select_for_update().get(pk=HEAD_PK)
    return head


def _seal_batch(size: int) -> int:
    with transaction.atomic():
        head = _head_locked()
        rows = list(AuditRecord.objects.filter(seal__isnull=True).order_by("id")[:size])
        position, previous_hash = head.seal, head.hash
        for row in rows:
            position += 1
            row.seal, row.previous_hash = position, previous_hash
            row.hash = previous_hash = _digest(previous_hash=previous_hash, record=row)
        if rows:
            AuditRecord.objects.bulk_update(rows, ["seal", "previous_hash", "hash"])
            AuditChainHead.objects.filter(pk=HEAD_PK).update(seal=position, hash=previous_hash)
    return len(rows)


def audit_seal(limit: int | None = None) -> int:
    """Link committed unsealed records into the chain (id order), `SEAL_BATCH` per transaction,
    at most `limit` (None: all); returns how many were sealed. Call it outside any transaction:
    inside one, the head's lock would be held, and other locks with it, until that one ends."""
    sealed = 0
    while limit is None or sealed < limit:
        size = SEAL_BATCH if limit is None else min(SEAL_BATCH, limit - sealed)
        count = _seal_batch(size)
        sealed += count
        if count < size:
            break
    return sealed


@dataclass(frozen=True)
class AuditChainCheck:
    """What `audit_check` found. `broken`: the first sealed record whose link or hash is wrong.
    `head_found`: the record the chain head names is there with that hash (False: the sealed tail
    was removed, or the head was edited)."""

    broken: AuditRecord | None
    sealed: int
    unsealed: int
    oldest_unsealed_at: datetime | None
    head_found: bool

    @property
    def ok(self) -> bool:
        return self.broken is None and self.head_found


def audit_check(*, seal: bool = True) -> AuditChainCheck:
    """Walk the sealed chain in seal order, checking every link and hash and the head. With `seal`
    (the default) committed unsealed rows are sealed first, so the walk covers them."""
    if seal:
        audit_seal()
    head = AuditChainHead.objects.filter(pk=HEAD_PK).first()
    head_seal, head_hash = (head.seal, head.hash) if head else (0, "")
    previous_hash, sealed, broken, head_found = "", 0, None, head_seal == 0
    for record in AuditRecord.objects.filter(seal__isnull=False).order_by("seal").iterator(chunk_size=2000):
        sealed += 1
        expected = _digest(previous_hash=previous_hash, record=record)
        if broken is None and (record.previous_hash != previous_hash or record.hash != expected):
            broken = record
        if record.seal == head_seal:  # rows past it were sealed after the head was read
            head_found = record.hash == head_hash
        previous_hash = record.hash or ""
    unsealed = AuditRecord.objects.filter(seal__isnull=True).aggregate(n=Count("id"), at=Min("created_at"))
    return AuditChainCheck(broken, sealed, unsealed["n"], unsealed["at"], head_found)


def audit_verify(*, seal: bool = True) -> AuditRecord | None:
    """The first sealed record whose link or hash is broken, or None (see `audit_check`)."""
    return audit_check(seal=seal).broken
