"""Follow-up work goes through the outbox: a broker outage never fails a committed request.

`dispatch(task_name, args=[...], key=...)` records a `DispatchIntent` in the caller's transaction.
When it commits, this process tries to send it at once (the fast path; a failure is only logged),
and the beat relay (`core.relay_dispatch`, `dispatch_relay()`) delivers every intent still unsent,
with backoff. A second process on the in-memory broker (a shell or `manage.py simulate` beside
`python3 dev.py up`) has no worker of its own: it only records intents, which the running
system's relay drains from the shared database.

An intent keeps the correlation id of what recorded it (`core.agents.correlation`); the message
carries it as a header and the task runs in that scope (`core.receivers`), so agent runs a chat
session causes through the worker are found under the session's id too.

Delivery is at least once; tasks guard their state (and hold a `core.leases` lease), so a
duplicate message is harmless. Sending an intent claims it first with a conditional UPDATE, so
two relays (or a relay and the fast path) do not both send it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from celery import Celery, current_app
from django import db
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.agents.correlation import current_correlation_id
from core.models import DispatchIntent

logger = logging.getLogger(__name__)

RELAY_BATCH = 100
CLAIM_SECONDS = 30  # a sender that dies mid-send leaves its claim; the relay retries after this
MAX_BACKOFF_SECONDS = 60
FAST_PATH_PAUSE_SECONDS = 10  # after a failed send, requests stop trying the broker for a while
FAST_PATH_DB_ATTEMPTS = 5

CORRELATION_HEADER = "aria_correlation_id"  # the message header a task's correlation scope comes from

_state = threading.local()
_local_consumer = threading.Event()
_fast_path_paused_until = 0.0


def fast_path_resume() -> None:
    """The broker answers again: commits try to send at once again (the relay calls this)."""
    global _fast_path_paused_until
    _fast_path_paused_until = 0.0


def local_consumer_started() -> None:
    """The embedded worker consumes this process's in-memory broker: sending to it is delivery."""
    _local_consumer.set()


def local_consumer_stopped() -> None:
    _local_consumer.clear()


def _fast_path_usable() -> bool:
    app = current_app
    if app.conf.task_always_eager:
        return True
    if time.monotonic() < _fast_path_paused_until:
        return False
    # An in-memory broker with no worker in this process is a dead letter box: leave the intent
    # to the relay of the process that runs the worker.
    return not str(app.conf.broker_url or "").startswith("memory://") or _local_consumer.is_set()


def dispatch(task_name: str, *, args: Sequence[Any] = (), key: str, delay_seconds: float = 0) -> DispatchIntent:
    """Record follow-up work in the caller's transaction and send it once that commits.

    `key` names the unit of work: recording a key that exists keeps the first intent (sent or
    not) and sends nothing new. Never raises for a broker problem.
    """
    now = timezone.now()
    intent, created = DispatchIntent.objects.get_or_create(
        dedupe_key=key[:200],
        defaults={
            "task_name": task_name,
            "args": list(args),
            "scheduled_for": now + timedelta(seconds=delay_seconds),
            "correlation_id": current_correlation_id.get(),
        },
    )
    if created and not delay_seconds:
        transaction.on_commit(lambda: _send_fast(intent.pk))
    return intent


def _send_fast(intent_id: int) -> None:
    if not _fast_path_usable():
        return
    if current_app.conf.task_always_eager:  # tests: the task runs here, as .delay() would
        _send_by_id(intent_id)
        return
    # A request never waits on the broker (an unreachable Redis takes seconds to refuse).
    _sender_pool().submit(_send_in_background, intent_id, current_app._get_current_object())


def _send_by_id(intent_id: int, app: Celery | None = None) -> None:
    intent = DispatchIntent.objects.filter(pk=intent_id, sent_at__isnull=True).first()
    if intent is not None:
        deliver(intent, app=app)


def _send_in_background(intent_id: int, app: Celery) -> None:
    try:
        for attempt in range(FAST_PATH_DB_ATTEMPTS):
            try:
                _send_by_id(intent_id, app)
                return
            except db.OperationalError:
                # SQLite answers "table is locked" to a second connection while another one
                # writes (its busy timeout does not cover shared-cache locks): a moment later
                # the claim goes through. PostgreSQL waits on the row lock instead.
                if attempt == FAST_PATH_DB_ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))
    except Exception:  # the relay delivers it later
        logger.exception("Dispatch fast path failed for intent %s", intent_id)
    finally:
        db.connection.close()  # this thread's connection goes back (or to the pool)


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _sender_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dispatch-send")
        return _pool


def _task_sender(app: Celery, task_name: str):
    task = app.tasks.get(task_name)
    if task is None and not getattr(_state, "imported", False):
        app.loader.import_default_modules()
        _state.imported = True
        task = app.tasks.get(task_name)
    return task


def _send(intent: DispatchIntent, app: Celery) -> None:
    headers = {CORRELATION_HEADER: intent.correlation_id} if intent.correlation_id else None
    task = _task_sender(app, intent.task_name)
    if task is not None:  # eager in tests; otherwise the same message send_task would publish
        task.apply_async(args=intent.args, retry=False, headers=headers)
    else:
        app.send_task(intent.task_name, args=intent.args, retry=False, headers=headers)


def _claim(intent: DispatchIntent) -> bool:
    """Take the intent for one send: only one of two racing senders wins."""
    now = timezone.now()
    won = DispatchIntent.objects.filter(
        pk=intent.pk, sent_at__isnull=True, attempts=intent.attempts, scheduled_for__lte=now
    ).update(attempts=F("attempts") + 1, scheduled_for=now + timedelta(seconds=CLAIM_SECONDS))
    if won:
        intent.attempts += 1
    return bool(won)


def deliver(intent: DispatchIntent, *, app: Celery | None = None) -> bool:
    """Claim and send one intent; on failure schedule a retry with backoff. True if sent."""
    return _deliver(intent, app or current_app._get_current_object()) == "sent"


def _deliver(intent: DispatchIntent, app: Celery) -> str:
    global _fast_path_paused_until
    if not _claim(intent):
        return "lost"
    try:
        _send(intent, app)
    except Exception as exc:
        _fast_path_paused_until = time.monotonic() + FAST_PATH_PAUSE_SECONDS
        backoff = min(MAX_BACKOFF_SECONDS, 2 ** min(intent.attempts, 6))
        DispatchIntent.objects.filter(pk=intent.pk, sent_at__isnull=True).update(
            scheduled_for=timezone.now() + timedelta(seconds=backoff), last_error=f"{type(exc).__name__}: {exc}"[:2000]
        )
        logger.warning(
            "Dispatch of %s %s (intent %s, attempt %s) failed, retrying in %ss: %s",
            intent.task_name, intent.args, intent.pk, intent.attempts, backoff, exc,
        )  # fmt: skip
        return "failed"
    DispatchIntent.objects.filter(pk=intent.pk).update(sent_at=timezone.now(), last_error="")
    fast_path_resume()
    return "sent"


def dispatch_relay(limit: int = RELAY_BATCH) -> int:
    """Send a bounded batch of due, unsent intents (oldest first). Returns how many were sent."""
    due = list(
        DispatchIntent.objects.filter(sent_at__isnull=True, scheduled_for__lte=timezone.now()).order_by(
            "scheduled_for", "id"
        )[:limit]
    )
    sent, app = 0, current_app._get_current_object()
    for intent in due:
        outcome = _deliver(intent, app)
        if outcome == "failed":
            break  # the broker is down: the rest would fail the same way; the next tick retries
        sent += outcome == "sent"
    return sent


def dispatch_pending(key_prefix: str) -> bool:
    """Whether an intent under this key prefix is still waiting to be sent (for sweepers)."""
    return DispatchIntent.objects.filter(dedupe_key__startswith=key_prefix, sent_at__isnull=True).exists()


def dispatch_prune(*, older_than: timedelta = timedelta(days=1), limit: int = 1000) -> int:
    """Delete a bounded batch of intents sent long ago (the table stays small)."""
    ids = list(
        DispatchIntent.objects.filter(sent_at__lt=timezone.now() - older_than).values_list("pk", flat=True)[:limit]
    )
    if not ids:
        return 0
    return DispatchIntent.objects.filter(pk__in=ids).delete()[0]
