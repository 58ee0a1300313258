"""Work leases: one holder per unit of work (an investigation, a plan step), until it expires.

A task takes the lease before it starts the work and releases it when done; a duplicate or
re-driven message finds the lease held and does nothing. A holder that dies leaves its lease
behind: it is free again once it expires, or at once when its process is known to be dead (the
holder is `host:pid`; on the same host the pid is checked), so a restarted worker re-drives
the work without waiting out the TTL. Every change is a conditional UPDATE on the row's token.

Work that runs for minutes holds its lease with `lease_hold()`: a short TTL
(ARIA_LEASE_TTL_SECONDS) renewed by a heartbeat thread every TTL/3 while the work runs. A holder
that dies or hangs on any host stops renewing, so its lease is free within one short TTL, while
slow work that is alive keeps it for as long as it runs.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.models import WorkLease

logger = logging.getLogger(__name__)
HOST = socket.gethostname()


def lease_ttl() -> float:
    """The TTL of a heartbeated lease: how long a dead holder's work waits before it is re-driven."""
    return float(getattr(settings, "ARIA_LEASE_TTL_SECONDS", 45.0))


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


def lease_seize(key: str, *, ttl_seconds: float) -> Lease | None:
    """Take the lease on `key` even from a live holder (the caller decided it is hung: work past
    its outer bound). The holder's heartbeat then finds its token gone. None if another seizer won."""
    lease = lease_acquire(key, ttl_seconds=ttl_seconds)
    if lease is not None:
        return lease
    row = WorkLease.objects.filter(key=key).first()
    if row is None:
        return lease_acquire(key, ttl_seconds=ttl_seconds)
    now, token = timezone.now(), uuid.uuid4().hex
    won = WorkLease.objects.filter(key=key, token=row.token).update(
        holder=current_holder(), token=token, acquired_at=now, expires_at=now + timedelta(seconds=ttl_seconds)
    )
    return Lease(key, token) if won else None


def leases_seize(keys: Sequence[str], *, ttl_seconds: float) -> list[Lease]:
    """Take the leases on `keys` at once, from whoever holds them, in two statements whatever their
    number. Only for work the caller has just claimed by a conditional update in the same
    transaction: nobody else can be working on it, so a row left on its key is a former attempt's."""
    if not keys:
        return []
    now, holder = timezone.now(), current_holder()
    leases = [Lease(key, uuid.uuid4().hex) for key in keys]
    WorkLease.objects.filter(key__in=keys).delete()
    WorkLease.objects.bulk_create(
        WorkLease(key=lease.key, holder=holder, token=lease.token, acquired_at=now,
                  expires_at=now + timedelta(seconds=ttl_seconds))
        for lease in leases
    )  # fmt: skip
    return leases


def lease_release(lease: Lease) -> None:
    WorkLease.objects.filter(key=lease.key, token=lease.token).delete()


def leases_release(leases: Sequence[Lease]) -> None:
    """Release several leases in one statement; one taken over since (its token changed) stays."""
    if leases:
        WorkLease.objects.filter(
            key__in=[lease.key for lease in leases], token__in=[lease.token for lease in leases]
        ).delete()


def lease_renew(lease: Lease, *, ttl_seconds: float) -> bool:
    """Push the lease's expiry to now + ttl; False when the token is gone (it was taken over)."""
    expires = timezone.now() + timedelta(seconds=ttl_seconds)
    return bool(WorkLease.objects.filter(key=lease.key, token=lease.token).update(expires_at=expires))


class LeaseHeartbeat:
    """A daemon thread renewing `leases` every `interval` seconds until `stop()`.

    A renewal that finds a token gone is logged (the work was taken over: its holder looked dead)
    and that lease is no longer renewed. A database error is logged and retried at the next beat.
    The thread closes its own database connection after every beat and when it ends.
    """

    def __init__(self, leases: Sequence[Lease], *, ttl_seconds: float, interval: float | None = None) -> None:
        self.leases = list(leases)
        self.ttl_seconds = ttl_seconds
        self.interval = interval if interval is not None else ttl_seconds / 3
        self.lost: list[Lease] = []
        self._stop = threading.Event()
        names = ",".join(lease.key for lease in self.leases[:3])
        self._thread = threading.Thread(target=self._run, name=f"lease-heartbeat[{names}]", daemon=True)

    def start(self) -> LeaseHeartbeat:
        if self.leases:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=max(5.0, self.interval))

    def _run(self) -> None:
        try:
            while self.leases and not self._stop.wait(self.interval):
                for lease in list(self.leases):
                    try:
                        renewed = lease_renew(lease, ttl_seconds=self.ttl_seconds)
                    except Exception:
                        logger.exception("Lease %s: renewal failed; retrying in %.0fs", lease.key, self.interval)
                        continue
                    if not renewed:
                        logger.warning("Lease %s was taken over (its token is gone); no longer renewing it", lease.key)
                        self.leases.remove(lease)
                        self.lost.append(lease)
                connection.close()  # hand it back (to the pool) between beats
        finally:
            connection.close()


@contextmanager
def leases_heartbeat(leases: Sequence[Lease], *, ttl_seconds: float | None = None) -> Iterator[LeaseHeartbeat]:
    """Renew already-acquired `leases` while the block runs (the caller releases them)."""
    beat = LeaseHeartbeat(leases, ttl_seconds=lease_ttl() if ttl_seconds is None else ttl_seconds).start()
    try:
        yield beat
    finally:
        beat.stop()


@contextmanager
def lease_hold(
    key: str, *, ttl_seconds: float | None = None, heartbeat_seconds: float | None = None
) -> Iterator[Lease | None]:
    """Hold the lease on `key` while the block runs: yields None when a live holder has it, else the
    lease, renewed every `heartbeat_seconds` (default TTL/3) and released when the block ends.
    The TTL defaults to ARIA_LEASE_TTL_SECONDS: a holder that dies is noticed within it."""
    ttl = lease_ttl() if ttl_seconds is None else ttl_seconds
    lease = lease_acquire(key, ttl_seconds=ttl)
    if lease is None:
        yield None
        return
    beat = LeaseHeartbeat([lease], ttl_seconds=ttl, interval=heartbeat_seconds).start()
    try:
        yield lease
    finally:
        beat.stop()
        lease_release(lease)


def lease_held(key: str) -> bool:
    """Whether a live holder has the lease on `key`."""
    row = WorkLease.objects.filter(key=key).first()
    return row is not None and not lease_free(row, timezone.now())


def leases_prune(*, limit: int = 1000) -> int:
    """Delete a bounded batch of leases that expired (a holder that died without releasing)."""
    ids = list(WorkLease.objects.filter(expires_at__lte=timezone.now()).values_list("pk", flat=True)[:limit])
    return WorkLease.objects.filter(pk__in=ids).delete()[0] if ids else 0
