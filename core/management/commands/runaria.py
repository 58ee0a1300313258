"""Run the whole system in one process: daphne (HTTP + WebSocket) and, embedded, Celery + app services.

The ASGI app is `settings.ASGI_APPLICATION` and the Celery app `settings.ARIA_CELERY_APP`, so the
kernel imports no project module. Embedded mode (no REDIS_URL; settings.ARIA_EMBEDDED_WORKER): a
Celery worker (threads pool) and Celery beat run in threads on the in-memory broker, then every
background service an app registered (`core.background`, e.g. sentinel's demo simulator). With
REDIS_URL set only the web server runs here; the worker, beat and services are separate processes
(see README.md). SIGINT/SIGTERM stop everything; exit 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

from channels.routing import get_default_application
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.module_loading import import_string

from core.background import BackgroundService, background_services
from core.management.embedded import EmbeddedBeat, EmbeddedWorker


class Command(BaseCommand):
    help = "Run ARIA: daphne, plus the embedded Celery worker, beat and the apps' services when there is no Redis."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.ARIA_HOST, help="Interface to bind (ARIA_HOST).")
        parser.add_argument("--port", type=int, default=settings.ARIA_PORT, help="Port to bind (ARIA_PORT).")
        parser.add_argument("--concurrency", type=int, default=4, help="Embedded worker threads.")
        for service in background_services():  # e.g. sentinel's --scenario and --no-simulator
            if service.add_arguments is not None:
                service.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        # Import daphne's server first: it installs the asyncio Twisted reactor.
        from daphne.server import Server

        # lazy: daphne installs the Twisted reactor on import; only this command may
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        application = get_default_application()  # settings.ASGI_APPLICATION
        celery_app = import_string(settings.ARIA_CELERY_APP)
        project = settings.ARIA_CELERY_APP.split(".", 1)[0]

        host, port = options["host"], options["port"]
        verbosity = options["verbosity"]
        background: list[Any] = []
        if verbosity > 1:  # log every task received and finished (the worker re-applies LOGGING)
            logging_config: dict[str, Any] = settings.LOGGING
            logging_config.setdefault("loggers", {}).setdefault("celery", {})["level"] = "INFO"
            logging.getLogger("celery").setLevel(logging.INFO)
        if settings.ARIA_EMBEDDED_WORKER and not settings.CELERY_TASK_ALWAYS_EAGER:
            background = self._start_embedded(celery_app, options)
        else:
            commands = [f"celery -A {project} worker -l info", f"celery -A {project} beat -l info"]
            commands += [s.standalone_command for s in background_services() if s.standalone_command]
            self.stdout.write(
                "REDIS_URL is set: run the worker, beat and the apps' services as their own processes:\n"
                + "\n".join(f"  {command}" for command in commands)
            )

        asgi_app = ASGIStaticFilesHandler(application) if settings.DEBUG else application
        stdout = self.stdout

        class AriaServer(Server):
            listen_failed = False

            def listen_success(self, port_obj: Any) -> None:
                super().listen_success(port_obj)
                shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
                stdout.write(
                    f"\nARIA is running at http://{shown}:{port}/  (admin /admin/, API docs /api/docs)\n"
                    "Sign in as operator (operator2: the incoming shift), approver or admin; the demo passwords "
                    f"are in {settings.VAR_DIR / 'demo_credentials.txt'}.\n"
                    "Press Ctrl-C to stop.",
                )
                stdout.flush()  # also when stdout is a pipe or a log file

            def listen_error(self, failure: Any) -> None:
                AriaServer.listen_failed = True
                stdout.write(f"Cannot listen on {host}:{port}: {failure.getErrorMessage()}")
                super().listen_error(failure)

        server = AriaServer(
            asgi_app,
            endpoints=[f"tcp:port={port}:interface={host}"],
            signal_handlers=False,
            verbosity=verbosity,
        )
        self._install_signal_handlers(server)
        try:
            server.run()
        finally:
            self.stdout.write("Stopping …")
            for service in background:
                service.stop()
        if AriaServer.listen_failed:
            raise CommandError(f"Could not bind {host}:{port}.")
        self.stdout.write("Stopped.")

    def _start_embedded(self, celery_app: Any, options: dict[str, Any]) -> list[Any]:
        """Worker, beat and the apps' services in threads; returns them in the order they should stop."""
        services: list[BackgroundService] = []
        for spec in background_services():
            try:  # before anything starts, so a bad option (e.g. --scenario) is a plain error
                service = spec.build(options, self.stdout.write)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            if service is not None:
                services.append(service)
        worker = EmbeddedWorker(
            celery_app,
            concurrency=options["concurrency"],
            loglevel="INFO" if options["verbosity"] > 1 else "WARNING",
        )
        worker.start()
        if not worker.ready.wait(30):
            raise CommandError(f"The embedded Celery worker did not start: {worker.error!r}")
        beat = EmbeddedBeat(celery_app, schedule_filename=settings.CELERY_BEAT_SCHEDULE_FILENAME)
        for name in beat.skipped:
            self.stdout.write(f"Beat entry {name!r} skipped: its task is not registered (yet).")
        beat.start()
        self.stdout.write("Celery worker (threads) and beat are running in this process.")
        for service in services:
            service.start()
        # Stop order: beat first (nothing new is scheduled), then the apps' services, then the worker.
        return [beat, *services, worker]

    def _install_signal_handlers(self, server: Any) -> None:
        from twisted.internet import reactor  # lazy: the reactor daphne installed, not one imported at module load

        received: list[int] = []

        def on_signal(signum: int, frame: Any) -> None:
            if received:  # a second Ctrl-C: do not wait any longer
                sys.stderr.write("Forced exit.\n")
                os._exit(1)
            received.append(signum)
            if reactor.running:
                reactor.callFromThread(server.stop)
            else:
                server.stop()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
