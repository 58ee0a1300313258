"""One pattern for "everything done inside this `with` carries X": a context variable set for the
block and reset after it (nested scopes restore the outer value; a thread or task started inside
copies it). Used by the event bus's private scope and the agents' correlation scope."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")


@contextlib.contextmanager
def context_scope(var: contextvars.ContextVar[T], value: T | None) -> Iterator[T]:
    """`var` holds `value` inside the block; an empty value (None, "", ()) leaves the outer one
    in place and yields it."""
    if value is None or value == "" or value == ():
        yield var.get()
        return
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
