"""publish(): contract validation, the outbox row in the caller's transaction, broadcast on commit,
turn ids from the ContextVar, and the transport's cross-thread fast path."""

import asyncio
import json
import threading
import time
from datetime import datetime

import pytest
from channels.layers import get_channel_layer
from django.db import transaction

from core.errors import InvalidInput
from core.events import bus as bus_module
from core.events import current_turn_id, publish, transport, turn_scope
from core.models import Event
from core.models.events import event_frame

pytestmark = pytest.mark.django_db


@pytest.fixture
def broadcasts(monkeypatch):
    sent: list[dict] = []
    monkeypatch.setattr(bus_module, "broadcast", sent.append)
    return sent


def test_unknown_type_is_rejected_with_field():
    with pytest.raises(InvalidInput) as exc:
        publish("no_such_event", {})
    assert exc.value.field == "type"
    assert not Event.objects.exists()


def test_missing_field_is_rejected_with_field():
    with pytest.raises(InvalidInput) as exc:
        publish("agent_handoff", {"from_agent": "a", "reason": "r", "turn_id": "t"})
    assert exc.value.field == "to_agent"


def test_extra_field_is_rejected_with_field():
    with pytest.raises(InvalidInput) as exc:
        publish("work_order_ready", {"work_order_id": 1, "surprise": True})
    assert exc.value.field == "surprise"
    assert not Event.objects.exists()


def test_invalid_enum_value_is_rejected():
    payload = {
        "cell_id": 1,
        "signal_def_id": 2,
        "value": 9.5,
        "threshold": 8.0,
        "work_order_id": None,
        "time": "2026-01-01T00:00:00Z",
        "severity": "catastrophic",
        "direction": "high",
    }
    with pytest.raises(InvalidInput) as exc:
        publish("anomaly_detected", payload)
    assert exc.value.field == "severity"


def test_row_is_written_and_broadcast_only_on_commit(broadcasts, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        event = publish("work_order_ready", {"work_order_id": 7})
        # Given the transaction has not committed yet, nothing went out.
        assert broadcasts == []
    assert len(callbacks) == 1
    assert Event.objects.get(pk=event.pk).payload == {"work_order_id": 7}
    created_at = Event.objects.get(pk=event.pk).created_at.isoformat()
    assert broadcasts == [{"id": event.pk, "type": "work_order_ready", "work_order_id": 7, "created_at": created_at}]
    # Frames are plain JSON.
    assert json.loads(json.dumps(broadcasts[0])) == broadcasts[0]


def test_rolled_back_transaction_leaves_no_row_and_no_broadcast(broadcasts, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        publish("work_order_ready", {"work_order_id": 7})
        raise RuntimeError("caller failed after publishing")
    assert not Event.objects.exists()
    assert broadcasts == []


def test_ids_are_monotonic(broadcasts):
    ids = [publish("work_order_ready", {"work_order_id": n}).pk for n in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5


def test_turn_id_comes_from_turn_scope(broadcasts):
    with turn_scope("turn-abc") as turn:
        assert current_turn_id.get() == "turn-abc" == turn
        event = publish("agent_start", {"agent": "investigator"})
        explicit = publish("agent_start", {"agent": "investigator", "turn_id": "mine"})
    assert event.turn_id == "turn-abc" and event.payload["turn_id"] == "turn-abc"
    assert explicit.turn_id == "mine"
    assert current_turn_id.get() == ""


def test_turn_id_is_generated_outside_a_scope(broadcasts):
    event = publish("agent_end", {"agent": "x", "finish_reason": "end_turn"})
    assert len(event.turn_id) == 32


async def test_broadcast_from_worker_thread_reaches_the_bound_loop_quickly():
    """The in-memory layer is loop-bound: a send from a plain thread must be run on the server loop."""
    layer = get_channel_layer()
    channel = await layer.new_channel("test.")
    await layer.group_add(transport.EVENTS_GROUP, channel)
    transport.bind_server_loop(asyncio.get_running_loop())
    try:
        frame = {"id": 10**9, "type": "work_order_ready", "work_order_id": 1}
        started = time.perf_counter()
        worker = threading.Thread(target=transport.broadcast, args=(frame,))
        worker.start()
        message = await asyncio.wait_for(layer.receive(channel), timeout=0.2)
        elapsed = time.perf_counter() - started
        worker.join()
    finally:
        await layer.group_discard(transport.EVENTS_GROUP, channel)
    assert message == {"type": "bus.event", "frame": frame}
    assert elapsed < 0.2


async def test_broadcast_inside_a_running_loop_schedules_a_task():
    layer = get_channel_layer()
    channel = await layer.new_channel("test.")
    await layer.group_add(transport.EVENTS_GROUP, channel)
    try:
        frame = {"id": 10**9 + 1, "type": "work_order_ready", "work_order_id": 2}
        transport.broadcast(frame)  # must not block or raise inside the loop
        message = await asyncio.wait_for(layer.receive(channel), timeout=0.2)
    finally:
        await layer.group_discard(transport.EVENTS_GROUP, channel)
    assert message["frame"] == frame


def test_broadcast_without_a_server_loop_goes_through_the_broadcast_loop():
    from core.loops import daemon_loop

    idle = asyncio.new_event_loop()
    try:
        transport.bind_server_loop(idle)  # bound but not running: ignored
        assert transport.server_loop() is None
        layer, loop = get_channel_layer(), daemon_loop("event-broadcast")

        def on_loop(coro):
            return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=5)

        channel = on_loop(layer.new_channel())
        on_loop(layer.group_add(transport.EVENTS_GROUP, channel))
        frame = {"id": 1, "type": "work_order_ready", "work_order_id": 1}
        transport.broadcast(frame)  # returns without waiting for the send
        assert on_loop(layer.receive(channel))["frame"] == frame
        on_loop(layer.group_discard(transport.EVENTS_GROUP, channel))
    finally:
        idle.close()


def test_publish_many_writes_one_row_each_in_order_and_broadcasts_on_commit(
    broadcasts, django_capture_on_commit_callbacks
):
    from core.events import publish_many

    with django_capture_on_commit_callbacks(execute=True):
        events = publish_many("work_order_ready", [{"work_order_id": n} for n in (3, 1, 2)])
        assert broadcasts == []
    assert [e.payload["work_order_id"] for e in Event.objects.order_by("id")] == [3, 1, 2]
    assert [f["id"] for f in broadcasts] == [e.pk for e in events] == sorted(e.pk for e in events)
    with pytest.raises(InvalidInput) as exc:  # one bad payload: nothing of the batch is written
        publish_many("work_order_ready", [{"work_order_id": 4}, {"work_order_id": "x"}])
    assert exc.value.field == "work_order_id" and Event.objects.count() == 3


def test_every_frame_carries_created_at_and_the_envelope_wins_over_payload_fields(
    broadcasts, django_capture_on_commit_callbacks
):
    """An anomaly's own `time` (the sample time) stays; `created_at` is when it was published."""
    payload = {
        "cell_id": 1,
        "signal_def_id": 2,
        "value": 5.0,
        "threshold": 4.5,
        "work_order_id": None,
        "time": "2026-01-01T00:00:00+00:00",
        "severity": "alert",
        "direction": "high",
    }
    with django_capture_on_commit_callbacks(execute=True):
        event = publish("anomaly_detected", payload)
    [frame] = broadcasts
    assert frame["time"] == "2026-01-01T00:00:00+00:00"
    assert datetime.fromisoformat(frame["created_at"]) == Event.objects.get(pk=event.pk).created_at
    assert event_frame(7, "x", {"id": 1, "type": "y", "created_at": "z", "a": 1}, event.created_at) == {
        "id": 7,
        "type": "x",
        "created_at": event.created_at.isoformat(),
        "a": 1,
    }


def test_an_event_type_may_not_reuse_the_frame_envelope_keys():
    from core.events.contract import _Payload, register_event_type

    class Clashing(_Payload):
        type: str

    with pytest.raises(ValueError, match="envelope"):
        register_event_type("clashing_event", Clashing)
