"""Running calls at once in threads, as two workers would: each thread closes its own database
connection, and an exception in any of them fails the test."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connection


def in_threads(*calls: Callable[[], object], timeout: float = 60) -> None:
    """Run each call in its own thread, wait for all, and re-raise what any of them raised."""
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        try:
            call()
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not errors, errors
