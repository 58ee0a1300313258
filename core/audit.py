"""The audit trail: append-only records, each carrying the hash of the one before it."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from core.access import stored_user
from core.models import AuditRecord


def _digest(
    *,
    previous_hash: str,
    actor_label: str,
    action: str,
    target_type: str,
    target_id: str,
    details: Any,
    created_at: str,
) -> str:
    body = json.dumps(
        [previous_hash, actor_label, action, target_type, target_id, details, created_at],
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


def _linked(entry: AuditEntry, previous_hash: str, created_at: datetime) -> AuditRecord:
    """The unsaved record for `entry`, chained to `previous_hash`."""
    details = json.loads(json.dumps(entry.details or {}, cls=DjangoJSONEncoder))
    actor = entry.actor
    actor_label = actor.get_username() if actor is not None and actor.is_authenticated else "system"
    record = AuditRecord(
        actor=stored_user(actor),
        actor_label=actor_label,
        action=entry.action,
        target_type=entry.target_type,
        target_id=str(entry.target_id),
        details=details,
        created_at=created_at,
        previous_hash=previous_hash,
    )
    record.hash = _digest(
        previous_hash=previous_hash,
        actor_label=actor_label,
        action=entry.action,
        target_type=entry.target_type,
        target_id=record.target_id,
        details=details,
        created_at=created_at.isoformat(),
    )
    return record


def _chain_head() -> str:
    """The last record's hash, its row locked: writers serialise so the chain stays linear (the
    unique hash makes a fork impossible). Call inside a transaction."""
    last = AuditRecord.objects.select_for_update().order_by("-id").only("hash").first()
    return last.hash if last else ""


def audit_record(
    *,
    actor: AbstractBaseUser | AnonymousUser | None,
    action: str,
    target_type: str,
    target_id: Any,
    details: dict[str, Any] | None = None,
) -> AuditRecord:
    """Append one record to the chain, in the caller's transaction."""
    with transaction.atomic():
        record = _linked(AuditEntry(actor, action, target_type, target_id, details), _chain_head(), timezone.now())
        record.save()
    return record


def audit_record_many(entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """Append several records in order, in the caller's transaction, with a constant number of
    queries (the head locked once, one INSERT): the bulk transitions (core.transitions) use it."""
    if not entries:
        return []
    with transaction.atomic():
        previous_hash, created_at = _chain_head(), timezone.now()
        records = []
        for entry in entries:
            record = _linked(entry, previous_hash, created_at)
            records.append(record)
            previous_hash = record.hash
        return AuditRecord.objects.bulk_create(records)


def audit_verify() -> AuditRecord | None:
    """Walk the chain in id order; return the first record whose link or hash is broken."""
    previous_hash = ""
    for record in AuditRecord.objects.order_by("id").iterator(chunk_size=2000):
        expected = _digest(
            previous_hash=previous_hash,
            actor_label=record.actor_label,
            action=record.action,
            target_type=record.target_type,
            target_id=record.target_id,
            details=record.details,
            created_at=record.created_at.isoformat(),
        )
        if record.previous_hash != previous_hash or record.hash != expected:
            return record
        previous_hash = record.hash
    return None
