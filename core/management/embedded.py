"""The background services `runaria` runs inside the web process when there is no Redis.

Each one starts in a thread and stops on request: the Celery worker (threads pool) and Celery
beat (`celery.beat.EmbeddedService`); the services apps register (`core.background`) run beside
them. With REDIS_URL set these run as separate processes instead (`celery -A <project> worker`,
`celery -A <project> beat`, and each registered service's own command).
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

from celery import Celery
from celery.beat import EmbeddedService
from celery.worker import WorkController

from core.dispatch import local_consumer_started, local_consumer_stopped

logger = logging.getLogger(__name__)


class EmbeddedWorker:
    """A Celery worker with the threads pool, consuming from the in-process broker."""

    def __init__(self, app: Celery, *, concurrency: int = 4, loglevel: str = "WARNING") -> None:
        self.app = app
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.controller = WorkController(
            app=app,
            hostname=f"aria-embedded@{socket.gethostname()}",
            pool_cls="threads",
            concurrency=concurrency,
            loglevel=loglevel,
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
            ready_callback=lambda consumer: self._ready(),
        )
        self.thread = threading.Thread(target=self._run, name="celery-worker", daemon=True)

    def _ready(self) -> None:
        # Sends to the in-memory broker now reach a worker: the dispatch fast path may use it.
        local_consumer_started()
        self.ready.set()

    def _run(self) -> None:
        try:
            self.app.set_current()
            self.controller.start()
        except BaseException as exc:  # report it; the web server keeps serving
            self.error = exc
            logger.exception("Embedded Celery worker stopped with an error")

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        local_consumer_stopped()
        if self.thread.is_alive():
            self.controller.stop()
            self.thread.join(timeout)


class EmbeddedBeat:
    """Celery beat as a thread (it wakes at least once a second, so it stops promptly).

    Only entries whose task is registered are scheduled, so an app that has not written its
    task yet costs a notice at start-up, not an error every few seconds.
    """

    def __init__(self, app: Celery, *, schedule_filename: str | None = None) -> None:
        app.loader.import_default_modules()
        schedule = dict(app.conf.beat_schedule or {})
        self.skipped = sorted(name for name, entry in schedule.items() if entry["task"] not in app.tasks)
        app.conf.beat_schedule = {name: entry for name, entry in schedule.items() if name not in self.skipped}
        kwargs: dict[str, Any] = {"thread": True}
        if schedule_filename:
            kwargs["schedule_filename"] = schedule_filename
        self.service = EmbeddedService(app, **kwargs)

    def start(self) -> None:
        self.service.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self.service.is_alive():
            self.service.service.stop(wait=False)
            self.service.join(timeout)
