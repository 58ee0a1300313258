"""One scheduler: beat publishes only while it holds a Redis leader lease.

`celery -A aria_project beat` uses `LeaderScheduler` when REDIS_URL is set (settings
CELERY_BEAT_SCHEDULER). Every tick the leader renews its lease (a redis-py `Lock` with a TTL);
a second beat fails to take the lock, logs that it is standing by, and keeps trying, so it takes
over within one TTL of the leader dying. Without Redis (the embedded beat) it never waits.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from celery.beat import PersistentScheduler

logger = logging.getLogger("celery.beat")

LOCK_NAME = "aria:beat:leader"
LOCK_TTL_SECONDS = 30.0
STANDBY_POLL_SECONDS = 5.0


class LeaderScheduler(PersistentScheduler):
    """PersistentScheduler that sends due tasks only while it leads (Redis lock, renewed each tick)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from django.conf import settings  # settings read when the scheduler starts (celery imports this module first)

        self.lock_ttl = float(getattr(settings, "ARIA_BEAT_LOCK_TTL_SECONDS", LOCK_TTL_SECONDS))
        self.standby_poll = min(STANDBY_POLL_SECONDS, self.lock_ttl / 2)
        self._lock = None
        self.leading = False
        self._standby_logged = False
        super().__init__(*args, **kwargs)

    def _leader_lock(self):
        if self._lock is None:
            url = str(self.app.conf.broker_url or "")
            if not url.startswith(("redis://", "rediss://", "unix://")):
                return None
            import redis  # lazy: only with a Redis broker

            prefix = self.app.conf.task_default_queue or "celery"
            client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
            # Not thread-local: the beat thread that renews it may differ from the one that took it.
            self._lock = client.lock(f"{LOCK_NAME}:{prefix}", timeout=self.lock_ttl, thread_local=False)
        return self._lock

    def lead(self) -> bool:
        """Take or renew the leader lease; False (standing by) if another beat holds it."""
        lock = self._leader_lock()
        if lock is None:
            return True
        try:
            if self.leading:
                lock.reacquire()  # raises LockNotOwnedError if it expired and another beat took it
            else:
                self.leading = bool(lock.acquire(blocking=False))
                if self.leading:
                    logger.info("beat: leader lease %s acquired; this beat publishes the schedule", lock.name)
                    self._standby_logged = False
        except Exception as exc:  # lost the lease, or Redis is unreachable: stop publishing
            if self.leading:
                logger.warning("beat: leader lease lost (%s); standing by", exc)
            self.leading = False
        if not self.leading and not self._standby_logged:
            logger.info("beat: another beat holds the leader lease %s; standing by", lock.name)
            self._standby_logged = True
        return self.leading

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if not self.lead():
            return self.standby_poll
        # Wake often enough to renew the lease well before it expires.
        return min(super().tick(*args, **kwargs), self.lock_ttl / 3)

    def close(self) -> None:
        if self._lock is not None and self.leading:
            with contextlib.suppress(Exception):
                self._lock.release()
            self.leading = False
        super().close()
