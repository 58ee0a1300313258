"""Background services that apps register for `manage.py runaria`'s embedded mode.

With no Redis, `runaria` runs the Celery worker and beat in its own process and then every
service apps registered here (sentinel's demo simulator), so the kernel names no app. An app
registers from its `AppConfig.ready()`:

    register_background_service(
        "simulator",
        build=build_simulator,                  # (options, log) -> BackgroundService | None
        add_arguments=add_simulator_arguments,  # runaria's own flags for it (optional)
        standalone_command="python manage.py simulate",
    )

`build` gets runaria's parsed options and a log function. It returns a started-on-request
service, None when the options turn it off, or raises ValueError for a bad option (runaria
reports it before anything starts). With REDIS_URL set, runaria prints `standalone_command`
instead: the service is then its own process.
"""

from __future__ import annotations

import logging
import threading
from argparse import ArgumentParser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class BackgroundService(Protocol):
    """Something that runs beside the web server until asked to stop."""

    def start(self) -> None: ...

    def stop(self, timeout: float = ...) -> None: ...


Log = Callable[[str], None]
Builder = Callable[[Mapping[str, Any], Log], BackgroundService | None]


@dataclass(frozen=True)
class BackgroundServiceSpec:
    name: str
    build: Builder
    add_arguments: Callable[[ArgumentParser], None] | None = None
    standalone_command: str = ""


_services: dict[str, BackgroundServiceSpec] = {}


def register_background_service(
    name: str,
    *,
    build: Builder,
    add_arguments: Callable[[ArgumentParser], None] | None = None,
    standalone_command: str = "",
) -> None:
    """Register (or replace, so a repeated `ready()` is harmless) one background service."""
    _services[name] = BackgroundServiceSpec(name, build, add_arguments, standalone_command)


def background_services() -> list[BackgroundServiceSpec]:
    """The registered services, in registration order (the app order in INSTALLED_APPS)."""
    return list(_services.values())


class ThreadService:
    """Runs `target(stop_event)` in a daemon thread until `stop()` sets the event.

    An exception in `target` is logged; the web server keeps serving. The thread's database
    connection is closed when it ends.
    """

    def __init__(self, name: str, target: Callable[[threading.Event], None]) -> None:
        self.name = name
        self.target = target
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        from django.db import close_old_connections  # in the service thread: its own connections

        try:
            self.target(self.stop_event)
        except Exception:
            logger.exception("Background service %r stopped with an error", self.name)
        finally:
            close_old_connections()

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)
