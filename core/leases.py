"""Work leases: one holder per unit of work (an investigation, a generation), until it expires.

A task takes the lease before it starts the work and releases it when done; a duplicate or
re-driven message finds the lease held and does nothing. A holder that dies leaves its lease
behind: it is free again once it expires, or at once when its process is known to be dead (the
holder is `host:pid`; on the same host the pid is checked), so a restarted worker re-drives
the work without waiting out the TTL. Every change is a conditional UPDATE on the row's token.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.models import WorkLease

HOST = socket.gethostname()


def current_holder() -> str:
    return f"{HOST}:{os.getpid()}"


def holder_dead(holder: str) -> bool:
    """True when the holder ran on this host and its process is gone."""
    host, _, pid = holder.rpartition(":")
    if host != HOST or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


@dataclass(frozen=True)
class Lease:
    key: str
    token: str


def lease_free(row: WorkLease, now: datetime) -> bool:
    return row.expires_at <= now or holder_dead(row.holder)


def lease_acquire(key: str, *, ttl_seconds: float) -> Lease | None:
    """Take the lease on `key` for `ttl_seconds`, or None if a live holder has it."""
    now = timezone.now()
    token = uuid.uuid4().hex
    expires = now + timedelta(seconds=ttl_seconds)
    holder = current_holder()
    try:
        with transaction.atomic():
            WorkLease.objects.create(key=key, holder=holder, token=token, acquired_at=now, expires_at=expires)
        return Lease(key, token)
    except IntegrityError:
        pass
    row = WorkLease.objects.filter(key=key).first()
    if row is None or not lease_free(row, now):
        return None
    won = WorkLease.objects.filter(key=key, token=row.token).update(
        holder=holder, token=token, acquired_at=now, expires_at=expires
    )
    return Lease(key, token) if won else None


def lease_release(lease: Lease) -> None:
    WorkLease.objects.filter(key=lease.key, token=lease.token).delete()


def lease_held(key: str) -> bool:
    """Whether a live holder has the lease on `key`."""
    row = WorkLease.objects.filter(key=key).first()
    return row is not None and not lease_free(row, timezone.now())


def leases_prune(*, limit: int = 1000) -> int:
    """Delete a bounded batch of leases that expired (a holder that died without releasing)."""
    ids = list(WorkLease.objects.filter(expires_at__lte=timezone.now()).values_list("pk", flat=True)[:limit])
    return WorkLease.objects.filter(pk__in=ids).delete()[0] if ids else 0
