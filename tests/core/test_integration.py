"""PostgreSQL + Redis: a real Celery worker, channels-redis delivery, and PostgreSQL row locks.

Run with DATABASE_URL=postgres://… and REDIS_URL=redis://… (skipped otherwise).
"""

from __future__ import annotations

import threading
import uuid

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import DatabaseError, close_old_connections, connection, transaction

from aria_project.celery import app as celery_app
from core.consumers import EventsConsumer
from core.events.transport import EVENTS_GROUP
from core.models import AuditRecord
from tests.conftest import wait_until

pytestmark = pytest.mark.integration


def test_services_are_the_real_ones() -> None:
    assert connection.vendor == "postgresql"
    assert type(get_channel_layer()).__name__ == "RedisChannelLayer"
    assert settings.CELERY_BROKER_URL.startswith("redis://")


@pytest.mark.django_db(transaction=True)
def test_real_worker_executes_a_task(celery_worker) -> None:
    token = uuid.uuid4().hex
    # When a task is sent through the broker (send_task is never eager)
    celery_app.send_task("core.ping", args=[token])  # routed to this session's queue by settings_test
    # Then the worker process runs it against the test database
    ran = wait_until(lambda: AuditRecord.objects.filter(action="core.ping", target_id=token).exists(), 30)
    assert ran, celery_worker.log_tail()


@pytest.mark.django_db(transaction=True)
async def test_channels_redis_delivers_a_group_message_to_the_events_consumer(operator) -> None:
    inner = EventsConsumer.as_asgi()

    async def app(scope, receive, send):  # what AuthMiddlewareStack would do for a signed-in user
        return await inner({**scope, "user": operator}, receive, send)

    communicator = WebsocketCommunicator(app, "/ws/events")
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    # A frame that exists only on the channel layer (no outbox row), so the consumer's outbox
    # tail cannot be what delivers it; sent from a separate layer instance, as another process would.
    frame = {"id": 10**12, "type": "work_order_ready", "work_order_id": 7}
    sender = RedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    try:
        await sender.group_send(EVENTS_GROUP, {"type": "bus.event", "frame": frame})
        assert await communicator.receive_json_from(timeout=5) == frame
    finally:
        await communicator.disconnect()
        await sender.close_pools()


def _hold_lock(pk: int, locked: threading.Event, release: threading.Event) -> None:
    try:
        with transaction.atomic():
            Group.objects.select_for_update().get(pk=pk)
            locked.set()
            release.wait(10)
    finally:
        close_old_connections()
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_postgres_row_locks_nowait_and_skip_locked() -> None:
    first = Group.objects.create(name="lock-a")
    second = Group.objects.create(name="lock-b")
    locked, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(first.pk, locked, release))
    holder.start()
    try:
        assert locked.wait(10)
        # Another connection cannot take the held row with NOWAIT …
        with pytest.raises(DatabaseError, match="could not obtain lock"), transaction.atomic():
            Group.objects.select_for_update(nowait=True).get(pk=first.pk)
        # … and SKIP LOCKED passes over it to the free one (how workers share a batch).
        with transaction.atomic():
            free = list(
                Group.objects.select_for_update(skip_locked=True)
                .filter(name__startswith="lock-")
                .values_list("pk", flat=True)
            )
        assert free == [second.pk]
    finally:
        release.set()
        holder.join(10)
    # Once released the row can be locked again.
    with transaction.atomic():
        assert Group.objects.select_for_update(nowait=True).get(pk=first.pk) == first
