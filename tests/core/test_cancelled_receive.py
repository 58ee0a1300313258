"""A cancelled channel-layer receive ends (core.channel_layer, core.loops.cancel_and_wait).

Under Python 3.11 a channels-redis receive could drop its cancellation (redis-py awaits 3.11's
`asyncio.wait_for`, which returns instead of raising when a cancellation lands in the same turn)
and then block for good in its next BZPOPMIN. Seen for real: the last socket of a server closing
left its consumer waiting on the fan-out's cancelled receive, and `uvicorn` then never finished
its shutdown ("Waiting for background tasks to complete") — the sequence below hung at its first
round before the fix."""

import asyncio
import contextlib

import pytest

from core.loops import cancel_and_wait


async def _drops_its_first_cancellation(started: asyncio.Event) -> None:
    started.set()
    with contextlib.suppress(asyncio.CancelledError):  # dropped, as 3.11's wait_for drops one
        await asyncio.sleep(3600)
    await asyncio.sleep(3600)


async def test_a_task_that_dropped_its_cancellation_is_cancelled_again():
    started = asyncio.Event()
    task = asyncio.create_task(_drops_its_first_cancellation(started))
    await started.wait()
    await asyncio.wait_for(cancel_and_wait([task]), 60)  # a hang guard: without the repeat it never ends
    assert task.cancelled()


async def test_tasks_ending_in_errors_or_already_done_are_waited_for_without_raising():
    async def fails() -> None:
        raise ValueError("boom")

    failing, done = asyncio.create_task(fails()), asyncio.create_task(asyncio.sleep(0))
    await done
    await cancel_and_wait([failing, done])
    assert failing.done() and done.done()


class _Sink:
    def offer_many(self, frames: list) -> None:
        pass


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
async def test_the_last_sockets_of_a_process_closing_leave_no_receive_running():
    """As Channels runs consumers: each socket's own receive is pending on the shared process
    channel while the fan-out, subscribed once, receives the events group; the sockets leave one by
    one (the last one stops the fan-out's receive), then Channels cancels each socket's receive."""
    from channels.layers import get_channel_layer

    from core.channel_layer import RedisChannelLayer
    from core.events.fanout import EventFanout

    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer)
    for _ in range(5):
        fanout = EventFanout.current()
        sinks = [_Sink() for _ in range(3)]
        receives = []
        for sink in sinks:
            receives.append(asyncio.ensure_future(layer.receive(await layer.new_channel())))
            await fanout.subscribe(sink)
        await asyncio.sleep(0.3)  # every receive is waiting; one of them holds the BZPOPMIN
        for sink, receive in zip(sinks, receives, strict=True):
            # Waited for with a bound, never cancelled (a cancelled wait would hide the hang).
            leaving = asyncio.ensure_future(fanout.unsubscribe(sink))
            done, _ = await asyncio.wait({leaving}, timeout=60)
            assert leaving in done, "the socket's leave waits on a receive that does not end"
            receive.cancel()
            done, _ = await asyncio.wait({receive}, timeout=60)
            assert receive in done and receive.cancelled(), "a cancelled receive went on"
        assert fanout.channel is None and fanout.sinks == set()
    # Nothing of the layer runs on: no receive, no BZPOPMIN (cancellations under way finish).
    for _ in range(100):
        running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if not running:
            break
        await asyncio.sleep(0.1)
    assert running == []


async def test_a_receive_whose_library_call_drops_the_cancellation_still_ends(monkeypatch):
    """The library's receive stands in for the 3.11 race (it drops its first cancellation): the
    caller's cancellation ends the caller at once, and the library call is cancelled again until
    it ends, by a task of its own."""
    from channels_redis import core as channels_redis_core

    from core.channel_layer import RedisChannelLayer

    started, inner_ended = asyncio.Event(), asyncio.Event()

    async def library_receive(self, channel: str) -> dict:
        try:
            await _drops_its_first_cancellation(started)
        finally:
            inner_ended.set()
        return {}

    monkeypatch.setattr(channels_redis_core.RedisChannelLayer, "receive", library_receive)
    layer = RedisChannelLayer(hosts=["redis://127.0.0.1:1"])  # never connected: receive is replaced
    receive = asyncio.ensure_future(layer.receive("specific.test!x"))
    await started.wait()
    receive.cancel()
    done, _ = await asyncio.wait({receive}, timeout=60)
    assert receive in done and receive.cancelled()
    await asyncio.wait_for(inner_ended.wait(), 60)  # hang guard: the second cancellation ended it


async def test_cancelled_itself_it_still_ends_the_tasks_before_it_raises():
    """An event loop closing cancels every task once, the one cancelling and the receive alike:
    the receive that drops it must still be ended, or the loop's close waits on it for good."""
    started = asyncio.Event()
    task = asyncio.create_task(_drops_its_first_cancellation(started))
    await started.wait()
    stopping = asyncio.create_task(cancel_and_wait([task]))
    await asyncio.sleep(0)  # it has cancelled the task once, and waits
    stopping.cancel()
    done, _ = await asyncio.wait({stopping}, timeout=60)
    assert stopping in done and stopping.cancelled()
    assert task.cancelled()
