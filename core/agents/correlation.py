"""The correlation id of whatever caused an agent run (e.g. an assistant session), carried by a
context variable so every AgentRun started inside the scope — handoffs included — records it."""

from __future__ import annotations

import contextvars
from contextlib import AbstractContextManager

from core.context_scopes import context_scope

current_correlation_id: contextvars.ContextVar[str] = contextvars.ContextVar("aria_correlation_id", default="")


def correlation_scope(correlation_id: str) -> AbstractContextManager[str]:
    """Agent runs started inside record `correlation_id` (an empty id leaves the outer one)."""
    return context_scope(current_correlation_id, correlation_id)
