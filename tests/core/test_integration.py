"""PostgreSQL + Redis: a real Celery worker, channels-redis delivery, and PostgreSQL row locks.

Run with DATABASE_URL=postgres://… and REDIS_URL=redis://… (skipped otherwise).
"""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import DatabaseError, close_old_connections, connection, transaction

from aria_project.asgi import application
from aria_project.celery import app as celery_app
from core.events.transport import EVENTS_GROUP
from core.models import AuditRecord
from tests.conftest import session_cookie, wait_until

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


async def _connected_events_client(user) -> WebsocketCommunicator:
    """A signed-in browser's socket through the real ASGI stack (sockets follow a session)."""
    cookie = await sync_to_async(session_cookie)(user)
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver"), (b"cookie", cookie.encode())]
    communicator = WebsocketCommunicator(application, "/ws/events", headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    return communicator


async def _send_from_another_layer(frame: dict) -> None:
    """A frame that exists only on the channel layer (no outbox row), so the consumer's outbox
    tail cannot be what delivers it; sent from a separate layer instance, as another process would."""
    sender = RedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    try:
        await sender.group_send(EVENTS_GROUP, {"type": "bus.event", "frame": frame})
    finally:
        await sender.close_pools()


@pytest.mark.django_db(transaction=True)
async def test_channels_redis_delivers_a_group_message_to_the_events_consumer(operator) -> None:
    communicator = await _connected_events_client(operator)
    frame = {"id": 10**12, "type": "work_order_ready", "work_order_id": 7}
    try:
        await _send_from_another_layer(frame)
        assert await communicator.receive_json_from(timeout=5) == frame
    finally:
        await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_idle_consumer_survives_longer_than_the_redis_socket_timeout(operator) -> None:
    # redis-py 8's default 5 s socket timeout used to kill a consumer idle in BZPOPMIN.
    communicator = await _connected_events_client(operator)
    try:
        await asyncio.sleep(7)
        assert await communicator.receive_nothing(timeout=0.1)
        frame = {"id": 10**12 + 1, "type": "work_order_ready", "work_order_id": 8}
        await _send_from_another_layer(frame)
        assert await communicator.receive_json_from(timeout=5) == frame
    finally:
        await communicator.disconnect()


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
