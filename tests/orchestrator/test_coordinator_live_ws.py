"""A coordinator turn's live states reach its user's /ws/events socket, and no one else's (live
or replayed): the payload's `owner_id` makes the event private (core/events/stream.py); the turn's
agent events are published in its user's private scope too."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections

from aria_project.asgi import application
from core.access import OPERATOR
from core.agents.engines.fake import FakeEngine
from core.events import publish
from orchestrator.coordinator.service import coordinator_turn
from tests.conftest import session_cookie

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://testserver")
STATE = "coordinator_turn_state"


async def socket(user, path="/ws/events") -> WebsocketCommunicator:
    cookie = await sync_to_async(session_cookie)(user)
    comm = WebsocketCommunicator(application, path, headers=[(b"cookie", cookie.encode()), ORIGIN])
    assert (await comm.connect())[0]
    return comm


async def drain(comm: WebsocketCommunicator, quiet: float = 0.5) -> list[dict]:
    frames = []
    while not await comm.receive_nothing(timeout=quiet):
        frames.append(await comm.receive_json_from(timeout=2))
    return frames


async def test_states_reach_the_owner_only_live_and_replayed(operator, make_user):
    other = await sync_to_async(make_user)("mallory", OPERATOR)
    mine, theirs = await socket(operator), await socket(other)
    await asyncio.sleep(0.1)  # both joined the fan-out
    turn = await sync_to_async(coordinator_turn)(user=operator, message="What happened?")

    received = [f for f in await drain(mine) if f["type"] == STATE]
    assert received[0]["state"] == "inspecting" and received[-1]["state"] == "answered"
    assert received[-1]["coordinator_turn_id"] == turn.pk and received[-1]["offline"] is True
    # Nothing of the turn reaches another user — not its states, not its agents' events
    # (core.events.private_scope) — while public work still does.
    public = await sync_to_async(publish)("agent_start", {"agent": "investigator", "turn_id": "public-work"})
    foreign = await drain(theirs)
    assert [f["id"] for f in foreign] == [public.pk]
    await mine.disconnect()
    await theirs.disconnect()

    # replay from the start of the outbox: the owner gets the states again, the other user never
    mine, theirs = await socket(operator, "/ws/events?after=0"), await socket(other, "/ws/events?after=0")
    assert [f["state"] for f in await drain(mine) if f["type"] == STATE] == [f["state"] for f in received]
    assert not [f for f in await drain(theirs) if f["type"] == STATE]
    await mine.disconnect()
    await theirs.disconnect()


class HeldModel(FakeEngine):
    """The offline engine, held at its first model call until the test lets it go."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def complete(self, request, *, on_delta=None):
        assert self.release.wait(10)
        return super().complete(request, on_delta=on_delta)


async def next_state(comm: WebsocketCommunicator) -> dict:
    while True:
        frame = await comm.receive_json_from(timeout=5)
        if frame["type"] == STATE:
            return frame


async def test_states_arrive_while_the_turn_is_still_running(operator):
    mine = await socket(operator)
    await asyncio.sleep(0.1)
    release = threading.Event()

    def turn_in_a_request_thread(**kwargs):
        try:
            return coordinator_turn(**kwargs)
        finally:
            connections.close_all()  # this thread's own connection (PostgreSQL drops the test db after)

    run = sync_to_async(turn_in_a_request_thread, thread_sensitive=False)
    running = asyncio.ensure_future(run(user=operator, message="What happened?", engine=HeldModel(release)))
    try:
        first = await next_state(mine)  # the model has not answered yet
        assert first["state"] == "inspecting" and not running.done()
    finally:
        release.set()
    turn = await running
    states = [first["state"]]
    while states[-1] not in ("answered", "rejected", "failed"):
        states.append((await next_state(mine))["state"])
    assert states[-1] == {"ok": "answered", "rejected": "rejected", "failed": "failed"}[turn.status]
    await mine.disconnect()
