"""Published tools live in the one capability registry of each process: load them once, on the
first request (web) or task (worker) — not in AppConfig.ready, which must not query."""

from __future__ import annotations

import logging
import threading

from celery.signals import task_prerun
from django.core.signals import request_started
from django.db import DatabaseError

from assistant.publishers import load_published_tools

logger = logging.getLogger(__name__)
_loaded = threading.Event()
_lock = threading.Lock()


def ensure_published_tools(**kwargs) -> None:
    if _loaded.is_set():
        return
    with _lock:
        if _loaded.is_set():
            return

        try:
            count = load_published_tools()
        except DatabaseError:  # not migrated yet: try again on the next request
            logger.warning("Published tools not loaded: database not ready.")
            return
        _loaded.set()
        if count:
            logger.info("Registered %d published tool(s).", count)


request_started.connect(ensure_published_tools, dispatch_uid="assistant.published_tools")
task_prerun.connect(ensure_published_tools, dispatch_uid="assistant.published_tools", weak=False)
