"""/ws/agent/chat: transport only. Authenticates, validates frames, runs a chat turn in a thread
and forwards the ChatMap frames it produces."""

from __future__ import annotations

import json
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core.access import OPERATOR, has_scopes
from core.errors import DomainError

logger = logging.getLogger(__name__)
MAX_CONTENT = 20_000


def _parse_frame(text: str | None) -> tuple[dict[str, Any] | None, str]:
    try:
        frame = json.loads(text or "")
    except ValueError:
        return None, "Frame is not valid JSON."
    if not isinstance(frame, dict) or frame.get("type") != "user":
        return None, 'Expected {"type": "user", "content": ..., "session_id"?}.'
    content = frame.get("content")
    if not isinstance(content, str) or not content.strip():
        return None, "content must be a non-empty string."
    if len(content) > MAX_CONTENT:
        return None, f"content is longer than {MAX_CONTENT} characters."
    session_id = frame.get("session_id")
    if session_id is not None and (not isinstance(session_id, int) or isinstance(session_id, bool)):
        return None, "session_id must be an integer."
    return {"content": content, "session_id": session_id}, ""


class AgentChatConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        if not await database_sync_to_async(has_scopes)(user, [OPERATOR]):
            await self.close(code=4403)
            return
        self.session_id: int | None = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        frame, error = _parse_frame(text_data)
        if frame is None:
            await self.send_json({"type": "done", "error": error})
            return
        session_id = frame["session_id"] or self.session_id
        try:
            outcome = await database_sync_to_async(self._run_turn)(frame["content"], session_id)
        except DomainError as exc:
            await self.send_json({"type": "done", "error": exc.message})
            return
        except Exception as exc:  # the socket stays usable after a failed turn
            logger.exception("Chat turn failed")
            await self.send_json({"type": "done", "error": f"{type(exc).__name__}: {exc}"})
            return
        self.session_id = outcome.session.pk
        done: dict[str, Any] = {"type": "done"}
        if outcome.error:
            done["error"] = outcome.error
        await self.send_json(done)

    def _run_turn(self, content: str, session_id: int | None):
        from assistant.services.chat import chat_turn

        send = async_to_sync(self.send_json)
        return chat_turn(user=self.scope["user"], content=content, session_id=session_id, on_frame=send)
