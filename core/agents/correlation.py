"""The correlation id of whatever caused an agent run (e.g. an assistant session), carried by a
context variable so every AgentRun started inside the scope — handoffs included — records it."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

current_correlation_id: contextvars.ContextVar[str] = contextvars.ContextVar("aria_correlation_id", default="")


@contextlib.contextmanager
def correlation_scope(correlation_id: str) -> Iterator[str]:
    """Agent runs started inside record `correlation_id` (an empty id leaves the outer one)."""
    if not correlation_id:
        yield current_correlation_id.get()
        return
    token = current_correlation_id.set(correlation_id)
    try:
        yield correlation_id
    finally:
        current_correlation_id.reset(token)
