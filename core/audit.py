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

Keyed (core.audit_digest): a record's digest is HMAC-SHA256 under ARIA_AUDIT_KEY (`digest_version`
2; records sealed before that stay v1, plain SHA-256), and the head carries an HMAC of its position
and hash. Whoever can write the table but lacks the key cannot edit a record and recompute the chain
and the head so that it verifies; whoever holds the key and the database can. `audit_reseal()`
re-seals a verified v1 chain (or one under a previous key) under the current key.

Sealing runs (a) on commit of every transaction that audited (once per transaction), so rows are
normally sealed within milliseconds, and (b) from the sweeper (`core.sweep`, reaper
`core.audit_seal`) for rows a crash left between commit and on-commit: lost work is re-driven.

Tamper window: an unsealed row carries no hash, so whoever can write the table can change it
undetectably until it is sealed — normally milliseconds after commit, at most one sweep interval
(ARIA_SWEEP_INTERVAL) after a crash. `audit_check()` reports the unsealed rows and the oldest's age.
"""

from __future__ import annotations

import contextlib
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
from core.audit_digest import (
    DIGEST_V1,
    DIGEST_V2,
    AuditKeys,
    audit_keys,
    head_mac,
    head_message,
    key_index,
    record_body,
    record_digest,
)
from core.models import AuditChainHead, AuditRecord

logger = logging.getLogger(__name__)

HEAD_PK = 1
SEAL_BATCH = 500  # rows linked per sealing transaction: the head's lock is held this long at most


class AuditChainError(Exception):
    """The chain cannot be extended or re-sealed: its head or a record does not verify (the message
    never carries a key)."""


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
    except AuditChainError as exc:  # refused until the head verifies: the rows wait (aria_audit_unsealed)
        logger.error("Audit sealing refused: %s", exc)
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


def _keyed_tail(record: AuditRecord, keys: AuditKeys) -> bool:
    """Whether the last sealed record is v2 under an accepted key: its HMAC binds the chain before it."""
    body = record_body(record.previous_hash or "", record)
    return record.digest_version == DIGEST_V2 and key_index(keys.accepted, record.hash, body) is not None


def _head_key(head: AuditChainHead, keys: AuditKeys) -> int | None:
    """Index of the accepted key the head's MAC verifies under (0: the current one), or None."""
    return key_index(keys.accepted, head.mac, head_message(head.seal, head.hash))


def _head_locked(keys: AuditKeys) -> AuditChainHead:
    """The chain head, locked until the sealing transaction ends, its MAC verified: a head rewritten
    without the key is never extended (that would key the forgery); the head of an empty chain
    binds nothing and is re-keyed. A missing head is created for an empty chain, or from a last
    record keyed under an accepted key; else AuditChainError."""
    head = AuditChainHead.objects.select_for_update().filter(pk=HEAD_PK).first()
    if head is None:
        last = AuditRecord.objects.filter(seal__isnull=False).order_by("-seal").first()
        if last is not None and not _keyed_tail(last, keys):
            raise AuditChainError("The audit chain head is missing and the last sealed record is not keyed.")
        seal, last_hash = (last.seal or 0, last.hash or "") if last else (0, "")
        defaults = {"seal": seal, "hash": last_hash, "mac": head_mac(keys.current, seal, last_hash)}
        AuditChainHead.objects.get_or_create(pk=HEAD_PK, defaults=defaults)
        head = AuditChainHead.objects.select_for_update().get(pk=HEAD_PK)
    if _head_key(head, keys) is None:
        if head.seal or AuditRecord.objects.filter(seal__isnull=False).exists():
            raise AuditChainError(
                "The audit chain head's MAC does not verify under ARIA_AUDIT_KEY or ARIA_AUDIT_PREVIOUS_KEYS: "
                "not extending a chain that may have been rewritten (run manage.py verify_audit)."
            )
        head.hash = ""  # an empty chain starts from nothing; sealing its first record re-keys the head
    return head


def _seal_batch(size: int) -> int:
    keys = audit_keys()
    with transaction.atomic():
        head = _head_locked(keys)
        rows = list(AuditRecord.objects.filter(seal__isnull=True).order_by("id")[:size])
        position, previous_hash = head.seal, head.hash
        for row in rows:
            position += 1
            row.seal, row.previous_hash, row.digest_version = position, previous_hash, DIGEST_V2
            row.hash = previous_hash = record_digest(DIGEST_V2, keys.current, previous_hash, row)
        if rows:
            AuditRecord.objects.bulk_update(rows, ["seal", "previous_hash", "hash", "digest_version"])
            mac = head_mac(keys.current, position, previous_hash)
            AuditChainHead.objects.filter(pk=HEAD_PK).update(seal=position, hash=previous_hash, mac=mac)
    return len(rows)


def audit_seal(limit: int | None = None) -> int:
    """Link committed unsealed records into the chain (id order), `SEAL_BATCH` per transaction,
    at most `limit` (None: all); returns how many were sealed. Call it outside any transaction:
    inside one, the head's lock would be held, and other locks with it, until that one ends.
    Raises AuditChainError (sealing nothing) when the head does not verify."""
    sealed = 0
    while limit is None or sealed < limit:
        size = SEAL_BATCH if limit is None else min(SEAL_BATCH, limit - sealed)
        count = _seal_batch(size)
        sealed += count
        if count < size:
            break
    return sealed


@dataclass
class _Walk:
    """One pass over the sealed chain in seal order (see `audit_check`)."""

    head_seal: int
    head_hash: str
    sealed: int = 0
    broken: AuditRecord | None = None
    head_found: bool = False
    unkeyed: int = 0  # v1 records
    previous_key: int = 0  # v2 records that verify only under a previous key
    stale_from: int | None = None  # the first position not v2 under the current key

    def run(self, keys: AuditKeys) -> _Walk:
        self.head_found = self.head_seal == 0
        previous_hash, keyed_seen = "", False
        for record in AuditRecord.objects.filter(seal__isnull=False).order_by("seal").iterator(chunk_size=2000):
            self.sealed += 1
            key = None
            if record.digest_version == DIGEST_V2:
                keyed_seen = True
                key = key_index(keys.accepted, record.hash, record_body(previous_hash, record))
                valid = key is not None
                self.previous_key += bool(key)
            else:  # v1 only before every v2 record and within the head's reach (the head's MAC binds it)
                self.unkeyed += 1
                valid = (
                    record.digest_version == DIGEST_V1
                    and not keyed_seen
                    and (record.seal or 0) <= self.head_seal
                    and record.hash == record_digest(DIGEST_V1, b"", previous_hash, record)
                )
            if self.broken is None and (record.previous_hash != previous_hash or not valid):
                self.broken = record
            if key != 0 and self.stale_from is None:
                self.stale_from = record.seal
            if record.seal == self.head_seal:  # rows past it were sealed after the head was read
                self.head_found = record.hash == self.head_hash
            previous_hash = record.hash or ""
        return self


@dataclass(frozen=True)
class AuditChainCheck:
    """What `audit_check` found. `broken`: the first sealed record whose link or digest is wrong.
    `head_found`: the record the chain head names is there with that hash (False: the sealed tail
    was removed, or the head was edited). `head_keyed`: the head's MAC verifies under an accepted
    key (False: the head was rewritten without the key, or is missing). `unkeyed`: records sealed
    before keyed sealing (v1); `previous_key`: records sealed under a previous key (`audit_reseal`)."""

    broken: AuditRecord | None
    sealed: int
    unsealed: int
    oldest_unsealed_at: datetime | None
    head_found: bool
    head_keyed: bool = True
    unkeyed: int = 0
    previous_key: int = 0

    @property
    def ok(self) -> bool:
        return self.broken is None and self.head_found and self.head_keyed


def audit_check(*, seal: bool = True) -> AuditChainCheck:
    """Walk the sealed chain in seal order, checking every link and digest and the head (position,
    hash and MAC). With `seal` (the default) committed unsealed rows are sealed first, so the walk
    covers them (unless the sealer refuses the head: the walk then reports why)."""
    if seal:
        with contextlib.suppress(AuditChainError):
            audit_seal()
    keys = audit_keys()
    head = AuditChainHead.objects.filter(pk=HEAD_PK).first()
    walk = _Walk(head.seal, head.hash) if head else _Walk(0, "")
    walk.run(keys)
    empty = walk.sealed == 0 and walk.head_seal == 0  # nothing to bind: any key's (or no) head will do
    head_keyed = empty or (head is not None and _head_key(head, keys) is not None)
    unsealed = AuditRecord.objects.filter(seal__isnull=True).aggregate(n=Count("id"), at=Min("created_at"))
    return AuditChainCheck(
        walk.broken,
        walk.sealed,
        unsealed["n"],
        unsealed["at"],
        walk.head_found,
        head_keyed,
        walk.unkeyed,
        walk.previous_key,
    )


def audit_verify(*, seal: bool = True) -> AuditRecord | None:
    """The first sealed record whose link or digest is broken, or None (see `audit_check`)."""
    return audit_check(seal=seal).broken


def audit_reseal() -> int:
    """Re-seal the chain under the current key: v1 records, records under a previous key, and every
    record after the first of them (their links change); the head gets the current key's MAC.
    Seals what is committed, then verifies the whole chain holding the head's lock and refuses
    (AuditChainError, nothing written) one that does not verify. Idempotent: a chain already all
    under the current key is left as it is. Returns how many records were re-sealed."""
    audit_seal()
    keys = audit_keys()
    with transaction.atomic():
        head = _head_locked(keys)
        walk = _Walk(head.seal, head.hash).run(keys)
        if walk.broken is not None or not walk.head_found:
            raise AuditChainError("The audit chain does not verify (manage.py verify_audit): not re-sealing it.")
        if walk.stale_from is None and _head_key(head, keys) == 0:
            return 0
        position, previous_hash, resealed = head.seal, head.hash, 0
        if walk.stale_from is not None:
            before = AuditRecord.objects.filter(seal__lt=walk.stale_from).order_by("-seal").first()
            previous_hash, batch = (before.hash or "") if before else "", []
            rows = AuditRecord.objects.filter(seal__gte=walk.stale_from).order_by("seal")
            for row in rows.iterator(chunk_size=SEAL_BATCH):
                row.previous_hash, row.digest_version = previous_hash, DIGEST_V2
                row.hash = previous_hash = record_digest(DIGEST_V2, keys.current, previous_hash, row)
                position = row.seal or position
                batch.append(row)
                if len(batch) == SEAL_BATCH:
                    AuditRecord.objects.bulk_update(batch, ["previous_hash", "hash", "digest_version"])
                    resealed, batch = resealed + len(batch), []
            AuditRecord.objects.bulk_update(batch, ["previous_hash", "hash", "digest_version"])
            resealed += len(batch)
        mac = head_mac(keys.current, position, previous_hash)
        AuditChainHead.objects.filter(pk=HEAD_PK).update(seal=position, hash=previous_hash, mac=mac)
    audit_record(
        actor=None, action="audit.resealed", target_type="audit_chain", target_id=HEAD_PK, details={"records": resealed}
    )
    return resealed
