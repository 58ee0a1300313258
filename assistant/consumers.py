"""/ws/agent/chat: transport only. Authenticates, validates frames, runs a chat turn in a thread
and forwards the ChatMap frames it produces.

Turns run one at a time per socket, in a task, so the socket keeps handling control messages
(logout, revoked token, lost scope: core.sockets) while a turn streams; once the socket is
closed, the rest of a turn's frames are dropped. Each turn counts against the user's `chat`
rate limit and, with a real model provider, their daily token budget (core.throttling); a
refused turn is a `done` frame with the error and `retry_after`, and runs no model.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.conf import settings

from core.access import OPERATOR
from core.consumers import SessionBoundConsumer
from core.errors import DomainError
from core.json_body import has_lone_surrogate
from core.json_keys import json_body_problem
from core.request_limits import DEFAULT_MAX_JSON_DEPTH, json_nesting_depth
from core.throttling import CHAT, Throttled, rate_limit, token_budget_check

logger = logging.getLogger(__name__)
MAX_CONTENT = 20_000
# A frame holding the longest content, every character written as an escaped surrogate pair (12 characters).
MAX_FRAME = 12 * MAX_CONTENT + 4_096
MAX_QUEUED_TURNS = 3  # frames beyond this while turns are waiting get a `done` error


def _parse_frame(text: str | None) -> tuple[dict[str, Any] | None, str]:
    text = text or ""
    if len(text) > MAX_FRAME:  # parsed on the event loop: bounded, as an HTTP body is
        return None, f"Frame is longer than {MAX_FRAME} characters."
    raw = text.encode(errors="surrogatepass")
    max_depth = getattr(settings, "ARIA_API_MAX_JSON_DEPTH", DEFAULT_MAX_JSON_DEPTH)
    if json_nesting_depth(raw) > max_depth:  # before parsing: json.loads recurses (RecursionError)
        return None, f"Frame nests deeper than {max_depth} levels."
    try:
        frame = json.loads(text)
    except ValueError:
        return None, "Frame is not valid JSON."
    problem = json_body_problem(raw)  # as the HTTP routes refuse it (core.json_body)
    if problem is not None and problem.kind == "duplicate_key":
        return None, f"{problem.field}: the key {problem.token!r} appears more than once; send each key once."
    if problem is not None:
        return None, f"{problem.field}: {problem.token} is not a JSON number; send a finite number."
    if not isinstance(frame, dict) or frame.get("type") != "user":
        return None, 'Expected {"type": "user", "content": ..., "session_id"?}.'
    content = frame.get("content")
    if not isinstance(content, str) or not content.strip():
        return None, "content must be a non-empty string."
    if len(content) > MAX_CONTENT:
        return None, f"content is longer than {MAX_CONTENT} characters."
    if "\x00" in content:  # as the HTTP routes refuse it (core.request_limits): PostgreSQL text cannot hold it
        return None, "content must not contain NUL characters (\\u0000)."
    if has_lone_surrogate(content):  # a lone "\\ud800": no character; PostgreSQL cannot store it
        return None, "content must be Unicode characters; a \\ud800-\\udfff escape is half of a pair."
    session_id = frame.get("session_id")
    if session_id is not None and (not isinstance(session_id, int) or isinstance(session_id, bool)):
        return None, "session_id must be an integer."
    return {"content": content, "session_id": session_id}, ""


class AgentChatConsumer(SessionBoundConsumer):
    required_scopes = (OPERATOR,)
    # Class defaults: a frame after a refused connect (4401/4403) finds these, never an AttributeError.
    session_id: int | None = None
    _turn_lock: asyncio.Lock | None = None
    _turns: set[asyncio.Task] | None = None

    async def connect(self) -> None:
        refusal = await self.admit()  # before accepting: an open socket is already in its user's group
        await self.accept()
        if refusal is not None:
            await self.close(code=refusal)
            return
        self._turn_lock = asyncio.Lock()
        self._turns = set()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.socket_auth is None or self._turns is None:
            return  # refused or closed: frames are ignored
        frame, error = _parse_frame(text_data)
        if frame is None:
            await self.send_json({"type": "done", "error": error})
            return
        if not await self.socket_still_valid():
            return
        if len(self._turns) >= MAX_QUEUED_TURNS:
            await self.send_json({"type": "done", "error": "A turn is still running; wait for its done frame."})
            return
        task = asyncio.create_task(self._turn(frame))
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)

    async def stop_streams(self) -> None:
        for task in list(self._turns or ()):
            task.cancel()  # the turn's thread finishes on its own; its frames are dropped
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _turn(self, frame: dict[str, Any]) -> None:
        async with self._turn_lock:
            if self.socket_auth is None:
                return
            session_id = frame["session_id"] or self.session_id
            try:
                outcome = await database_sync_to_async(self._run_turn)(frame["content"], session_id)
            except Throttled as exc:
                await self._send(
                    {"type": "done", "error": exc.message, "code": exc.code, "retry_after": exc.retry_after}
                )
                return
            except DomainError as exc:
                await self._send({"type": "done", "error": exc.message})
                return
            except Exception:  # the socket stays usable after a failed turn; details stay in the log
                error_id = str(uuid.uuid4())
                logger.exception("Chat turn failed (error %s)", error_id)
                await self._send(
                    {"type": "done", "error": "Internal error.", "code": "server_error", "error_id": error_id}
                )
                return
            self.session_id = outcome.session.pk
            done: dict[str, Any] = {"type": "done"}
            if outcome.error:
                done["error"] = outcome.error
            await self._send(done)

    async def _send(self, frame: dict[str, Any]) -> None:
        if self.socket_auth is not None:  # closed (logout, revoked, scope lost): dropped
            await self.send_json(frame)

    def _run_turn(self, content: str, session_id: int | None):
        # looked up per turn: the engine and the chat service are swapped by settings (and tests)
        from assistant.engines import author_engine
        from assistant.services.chat import chat_turn

        user = self.user
        rate_limit(CHAT, user)  # refused turns write nothing and call no model
        engine = author_engine()
        token_budget_check(user, provider=engine.provider)
        send = async_to_sync(self._send)
        return chat_turn(user=user, content=content, session_id=session_id, on_frame=send, engine=engine)
