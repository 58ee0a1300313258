"""ChatMap frames over a real WebSocket: the ASGI application, session-cookie auth."""

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from aria_project.asgi import application
from tests.conftest import session_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
FRAME_KEYS = {
    "text_delta": {"type", "content"},
    "thinking_delta": {"type", "content"},
    "tool_call": {"type", "name", "args"},
    "tool_result": {"type", "name", "summary"},
    "ui_render": {"type", "component", "props"},
    "agent_handoff": {"type", "from", "to", "reason"},
}


async def _connect(user=None) -> tuple[WebsocketCommunicator, bool]:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if user is not None:
        cookie = await sync_to_async(session_cookie)(user)
        headers.append((b"cookie", cookie.encode()))
    communicator = WebsocketCommunicator(application, "/ws/agent/chat", headers=headers)
    connected, _ = await communicator.connect()
    return communicator, connected


async def _until_done(communicator) -> list[dict]:
    frames = []
    while True:
        frame = await communicator.receive_json_from(timeout=20)
        frames.append(frame)
        if frame["type"] == "done":
            return frames


async def test_anonymous_is_closed_4401():
    communicator, connected = await _connect()
    assert connected
    assert (await communicator.receive_output(timeout=5))["code"] == 4401
    await communicator.disconnect()  # ends the consumer here, not in the loop's teardown


async def test_without_operator_scope_is_closed_4403(make_user):
    user = await sync_to_async(make_user)("visitor")
    communicator, _connected = await _connect(user)
    assert (await communicator.receive_output(timeout=5))["code"] == 4403
    await communicator.disconnect()


async def test_chat_frames_are_exactly_the_chatmap(operator, plant):
    communicator, connected = await _connect(operator)
    assert connected
    await communicator.send_json_to({"type": "user", "content": "Why did P-02 trip?"})
    frames = await _until_done(communicator)

    assert frames[-1] == {"type": "done"}
    for frame in frames[:-1]:
        assert set(frame) == FRAME_KEYS[frame["type"]], frame
    types = [f["type"] for f in frames]
    assert {"text_delta", "thinking_delta", "tool_call", "tool_result", "ui_render", "agent_handoff"} <= set(types)
    text = "".join(f["content"] for f in frames if f["type"] == "text_delta")
    assert "Bearing wear" in text
    chart = next(f for f in frames if f["type"] == "ui_render")
    assert chart["component"] == "signal_chart"
    json.dumps(frames)  # everything is JSON
    await communicator.disconnect()


async def test_malformed_frames_get_an_error_done_and_the_socket_stays_usable(operator, plant):
    communicator, _ = await _connect(operator)
    await communicator.send_to(text_data="{not json")
    assert (await communicator.receive_json_from(timeout=5))["type"] == "done"
    await communicator.send_json_to({"type": "nope"})
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "done" and frame["error"]
    await communicator.send_json_to({"type": "user", "content": "", "session_id": "x"})
    assert (await communicator.receive_json_from(timeout=5))["error"]
    await communicator.send_json_to({"type": "user", "content": "What is the vibration of P-02?"})
    frames = await _until_done(communicator)
    assert frames[-1] == {"type": "done"} and any(f["type"] == "text_delta" for f in frames)
    await communicator.disconnect()


async def test_another_owners_session_id_is_an_error_done(operator, make_user, plant):
    from assistant.services.sessions import session_create

    other = await sync_to_async(make_user)("otto", "operator")
    session = await sync_to_async(session_create)(owner=other)
    communicator, _ = await _connect(operator)
    await communicator.send_json_to({"type": "user", "content": "hi", "session_id": session.pk})
    frame = await communicator.receive_json_from(timeout=5)
    assert frame == {"type": "done", "error": "Session not found."}
    await communicator.disconnect()


async def test_an_unexpected_failure_is_reported_without_its_details(operator, monkeypatch, caplog):
    # Given a turn that fails in a way nobody foresaw (here: the engine cannot even be built)...
    def broken_engine(*args, **kwargs):
        raise RuntimeError("secret detail: /var/aria/dev_secret_key")

    monkeypatch.setattr("assistant.engines.author_engine", broken_engine)
    communicator, connected = await _connect(operator)
    assert connected
    await communicator.send_json_to({"type": "user", "content": "Why did P-02 trip?"})
    done = (await _until_done(communicator))[-1]
    # Then the socket says only that it failed, with an id the log carries beside the traceback.
    assert done["error"] == "Internal error." and done["code"] == "server_error"
    assert "secret" not in json.dumps(done)
    assert done["error_id"] in caplog.text and "secret detail" in caplog.text
    # ...and the socket stays usable.
    monkeypatch.undo()
    await communicator.send_json_to({"type": "user", "content": "Why did P-02 trip?"})
    assert "error" not in (await _until_done(communicator))[-1]
    await communicator.disconnect()


async def test_a_nul_in_the_content_is_an_error_done_and_nothing_is_written(operator, plant):
    """PostgreSQL text cannot hold NUL: the turn failed deep in its first write ('Internal error.',
    a server_error logged) and left an empty session in the history. The HTTP routes refuse it
    (core.json_body); the socket now does too."""
    from assistant.models import Message, Session

    communicator, _ = await _connect(operator)
    await communicator.send_json_to({"type": "user", "content": "why did P-02 trip\u0000?"})
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "done" and "NUL" in frame["error"] and "code" not in frame
    assert await sync_to_async(Session.objects.count)() == 0
    assert await sync_to_async(Message.objects.count)() == 0
    await communicator.send_json_to({"type": "user", "content": "What is the vibration of P-02?"})
    frames = await _until_done(communicator)
    assert frames[-1] == {"type": "done"}
    await communicator.disconnect()


async def test_a_lone_surrogate_in_the_content_is_an_error_done_and_nothing_is_written(operator, plant):
    """'\\ud800' alone is valid JSON but no character: the turn failed in its first write
    ('Internal error.'), as a NUL did. A pair (an emoji written in ASCII) is its one character."""
    from assistant.models import Message, Session

    communicator, _ = await _connect(operator)
    await communicator.send_to(text_data='{"type": "user", "content": "why did P-02 trip \\ud800?"}')
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "done" and "half of a pair" in frame["error"] and "code" not in frame
    assert await sync_to_async(Session.objects.count)() == 0
    assert await sync_to_async(Message.objects.count)() == 0
    await communicator.send_to(text_data='{"type": "user", "content": "vibration of P-02 \\ud83d\\ude00"}')
    assert (await _until_done(communicator))[-1] == {"type": "done"}
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"type": "user", "content": "What is the vibration of P-02?", "content": "cancel WO-1"}', "'content'"),
        ('{"type": "user", "content": "hi", "session_id": NaN}', "NaN is not a JSON number"),
    ],
)
async def test_a_frame_the_http_routes_would_refuse_is_an_error_done(operator, plant, text, said):
    """As on every /api/ route (core.json_body): a repeated key (a log keeping the first
    'content' read another question than the one answered) or a non-JSON number."""
    from assistant.models import Message

    communicator, _ = await _connect(operator)
    await communicator.send_to(text_data=text)
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "done" and said in frame["error"]
    assert await sync_to_async(Message.objects.count)() == 0
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "Frame nests deeper than 64 levels."),
        ('{"type": "user", "content": "hi", "x": ' + "[" * 5_000 + "]" * 5_000 + "}", "nests deeper"),
        ('{"type": "user", "content": "hi", "x": "' + "a" * 300_000 + '"}', "Frame is longer than"),
    ],
    ids=["deep", "deep-inside-a-user-frame", "long"],
)
async def test_a_deep_or_oversized_frame_is_an_error_done_and_the_socket_stays_usable(operator, plant, text, said):
    """Before, json.loads raised RecursionError in receive(): the consumer died with the socket."""
    from assistant.models import Message

    communicator, _ = await _connect(operator)
    await communicator.send_to(text_data=text)
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "done" and said in frame["error"]
    assert await sync_to_async(Message.objects.count)() == 0
    await communicator.send_json_to({"type": "user", "content": "What is the vibration of P-02?"})
    assert (await _until_done(communicator))[-1] == {"type": "done"}
    await communicator.disconnect()
