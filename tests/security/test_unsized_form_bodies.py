"""A body sent without a Content-Length and labelled a form gets every JSON check under ASGI.

Under daphne or uvicorn a chunked request (Transfer-Encoding: chunked, no Content-Length) arrives
whole, and `request.body` is all of it. The door and the post-authentication checks read a
form-labelled body as JSON only when its length was declared, taking an undeclared one for a
stream never read as JSON — but the signals ingest and a plan step's stop/skip read `request.body`
as JSON whatever the content type. So a JSON body labelled `application/x-www-form-urlencoded` (or
multipart) and sent chunked skipped them all: the ingest stored the last of a repeated `value`
(9.9 instead of 1.0, raising an alarm), and the door's size bound did not apply either. Now such a
body is read, bounded and checked like any other. Each request here goes through the real ASGI
application, as the servers hand it over: no Content-Length header.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from aria_project.asgi import application
from core.tokens import api_token_create
from sentinel.models import SignalSample
from tests.sentinel.factories import make_signal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

FORM = b"application/x-www-form-urlencoded"
MULTIPART = b"multipart/form-data; boundary=x"


async def post_unsized(path: str, body: bytes, content_type: bytes, token: str | None = None) -> tuple[int, Any]:
    """POST `body` in two chunks with no Content-Length, as a server hands a chunked request over."""
    headers = [(b"content-type", content_type), (b"host", b"testserver")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    half = len(body) // 2
    chunks = [
        {"type": "http.request", "body": body[:half], "more_body": True},
        {"type": "http.request", "body": body[half:], "more_body": False},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if chunks:
            return chunks.pop(0)
        await asyncio.sleep(3600)  # the client stays connected until the answer
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("203.0.113.9", 5555),
        "server": ("testserver", 80),
    }
    await application(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(content)


@pytest.fixture
async def token(admin_user) -> str:
    _, raw = await sync_to_async(api_token_create)(user=admin_user, name="unsized")
    return raw


def _samples(signal_id: int) -> bytes:
    now = timezone.now().isoformat()
    return f'{{"samples": [{{"signal_id": {signal_id}, "time": "{now}", "value": 1.0, "value": 9.9}}]}}'.encode()


@pytest.mark.parametrize("content_type", [FORM, MULTIPART], ids=["urlencoded", "multipart"])
async def test_a_repeated_key_in_an_unsized_form_labelled_ingest_is_refused(token, content_type):
    signal = await sync_to_async(make_signal)()

    status, body = await post_unsized("/api/v1/signals/samples", _samples(signal.pk), content_type, token)

    assert (status, body["code"], body["field"]) == (400, "duplicate_key", "samples.0.value"), body
    assert not await sync_to_async(SignalSample.objects.exists)()


async def test_nan_and_a_nul_in_an_unsized_form_labelled_step_stop_are_refused(token):
    nan = await post_unsized("/api/v1/aria/plans/987654/steps/1/stop", b'{"reason": NaN}', FORM, token)
    nul = await post_unsized("/api/v1/aria/plans/987654/steps/1/stop", b'{"reason": "a\\u0000"}', FORM, token)

    assert (nan[0], nan[1]["field"]) == (422, "reason"), nan
    assert (nul[0], nul[1]["field"]) == (422, "reason"), nul


async def test_the_door_bounds_an_unsized_form_labelled_body_before_authentication():
    deep = b'{"a": ' + b"[" * 200 + b"]" * 200 + b"}"
    big = b'{"a": "' + b"x" * (2 * 1024 * 1024) + b'"}'

    too_deep = await post_unsized("/api/v1/signals/samples", deep, FORM)
    too_big = await post_unsized("/api/v1/signals/samples", big, FORM)
    anonymous = await post_unsized("/api/v1/signals/samples", b'{"samples": [], "samples": []}', FORM)

    assert (too_deep[0], too_deep[1]["code"]) == (400, "too_deep")
    assert (too_big[0], too_big[1]["code"]) == (413, "payload_too_large")
    assert (anonymous[0], anonymous[1]["code"]) == (401, "not_authenticated")  # never parsed: no 400


async def test_a_real_unsized_form_is_not_read_as_json(token):
    """A urlencoded form is Django's to parse: it reaches the route (here its 404), not a JSON refusal."""
    status, body = await post_unsized("/api/v1/aria/plans/987654/approve", b"a=1&a=2", FORM, token)

    assert (status, body["code"]) == (404, "not_found"), body
