import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.contrib.auth.models import Group, User

from core.access import ADMIN, APPROVER, OPERATOR

ROOT = Path(__file__).resolve().parents[1]


def _user(username: str, *scopes: str, **extra) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username, **extra)
    for scope in scopes:
        group, _ = Group.objects.get_or_create(name=scope)
        user.groups.add(group)
    return user


@pytest.fixture
def make_user(db):
    return _user


@pytest.fixture
def operator(db) -> User:
    return _user("olga", OPERATOR)


@pytest.fixture
def approver(db) -> User:
    return _user("april", APPROVER)


@pytest.fixture
def admin_user(db) -> User:
    return _user("adam", ADMIN)


def session_cookie(user: User) -> str:
    """The Cookie header value of a fresh signed-in session of `user` (what a browser's socket sends)."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.save()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


def integration_services_configured() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith("postgres") and bool(os.environ.get("REDIS_URL"))


def pytest_collection_modifyitems(config, items):
    """Integration tests need PostgreSQL and Redis: skipped unless DATABASE_URL and REDIS_URL are set.
    Browser tests run last.

    With ARIA_REQUIRE_INTEGRATION=1 (CI's second leg) a missing service or an empty integration
    selection is an error, never a silent skip.
    """
    # Browser tests last: Playwright's sync API keeps an event loop running in the main thread
    # while its session-scoped browser lives, which breaks any async test collected after it.
    items[:] = [item for item in items if "browser" not in item.keywords] + [
        item for item in items if "browser" in item.keywords
    ]
    integration = [item for item in items if "integration" in item.keywords]
    if os.environ.get("ARIA_REQUIRE_INTEGRATION") == "1":
        if not integration_services_configured():
            raise pytest.UsageError("ARIA_REQUIRE_INTEGRATION=1 needs DATABASE_URL=postgres://… and REDIS_URL.")
        if not integration and not config.getoption("keyword") and not config.getoption("markexpr"):
            raise pytest.UsageError("ARIA_REQUIRE_INTEGRATION=1 but no integration tests were collected.")
    if integration_services_configured():
        return
    skip = pytest.mark.skip(reason="needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    for item in integration:
        item.add_marker(skip)


# --- a real Celery worker for integration tests ------------------------------------------------


@dataclass
class CeleryWorker:
    """A `celery worker -P threads` subprocess on the test database and this session's queue."""

    process: subprocess.Popen
    nodename: str
    queue: str
    log_path: Path

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def busy(self) -> bool:
        """Whether the worker holds a task (running, prefetched or held for its ETA) or its queue
        still has messages."""
        from aria_project.celery import app as celery_app

        inspect = celery_app.control.inspect(destination=[self.nodename], timeout=0.5)
        for held in (inspect.active(), inspect.reserved(), inspect.scheduled()):
            if held is None or any(held.values()):
                return True  # no answer counts as busy: the worker may be mid-task
        with celery_app.connection_for_read() as conn:
            try:
                return bool(conn.default_channel.queue_declare(self.queue, passive=True).message_count)
            except conn.channel_errors:  # the Redis transport: an emptied queue's key is gone
                return False

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Until the worker is seen idle twice in a row (a task may queue another as it ends)."""
        idle_in_a_row = 0

        def settled() -> bool:
            nonlocal idle_in_a_row
            idle_in_a_row = 0 if self.busy() else idle_in_a_row + 1
            return idle_in_a_row >= 2

        return bool(wait_until(settled, timeout=timeout, interval=0.3))


def wait_until(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.1) -> Any:
    """Poll `predicate` until it returns something truthy; returns it, or None on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(interval)
    return None


def _database_url_for(name: str) -> str:
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture
def celery_worker(_celery_worker_process: CeleryWorker, transactional_db) -> Iterator[CeleryWorker]:
    """The session's real worker (integration tests only).

    Tests enqueue with `celery_app.send_task("app.verb", args=[…])` (never eager) and poll the
    database with `wait_until`; the worker sees their rows (`transactional_db`). The test ends
    only once the worker is idle: a task still writing (an alarm's work order, an investigation)
    would otherwise race the teardown's flush — CI saw that TRUNCATE deadlock.
    """
    yield _celery_worker_process
    if not _celery_worker_process.wait_idle():
        pytest.fail(f"the celery worker was still busy 30 s after the test:\n{_celery_worker_process.log_tail()}")


@pytest.fixture(scope="session")
def _celery_worker_process(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[CeleryWorker]:
    """Start one real worker for the session; stop it at the end."""
    if not integration_services_configured():
        pytest.skip("needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    from django.conf import settings
    from django.db import connection

    from aria_project.celery import app as celery_app

    nodename = f"pytest-{settings.ARIA_TEST_SESSION}@{socket.gethostname()}"
    log_path = tmp_path_factory.mktemp("celery") / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "aria_project.settings_test",
        "DATABASE_URL": _database_url_for(connection.settings_dict["NAME"]),
        "ARIA_TEST_WORKER": "1",
        "ARIA_TEST_SESSION": settings.ARIA_TEST_SESSION,
        "ARIA_VAR_DIR": str(log_path.parent),
    }
    command = [
        sys.executable, "-m", "celery", "-A", "aria_project", "worker", "-P", "threads", "-c", "4",
        "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "-n", nodename, "-l", "info",
        "--without-heartbeat", "--without-mingle", "--without-gossip",
    ]  # fmt: skip
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    worker = CeleryWorker(process, nodename, settings.CELERY_TASK_DEFAULT_QUEUE, log_path)

    def answers_ping() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited with {process.returncode}:\n{worker.log_tail()}")
        return bool(celery_app.control.ping(destination=[nodename], timeout=0.5))

    try:
        if not wait_until(answers_ping, timeout=60, interval=0.2):
            raise RuntimeError(f"celery worker did not become ready:\n{worker.log_tail()}")
        yield worker
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def steady_registry(settings) -> None:
    """For tests that count queries across a run that dispatches capabilities: the registry's
    periodic refresh (every ARIA_REGISTRY_REFRESH_SECONDS, 2 s) would add its queries to whichever
    run crosses the interval on a slow machine. Refreshed once now, then not again in the test."""
    from core.capabilities import refresh_registry

    refresh_registry(force=True)
    settings.ARIA_REGISTRY_REFRESH_SECONDS = 3600


@pytest.fixture(autouse=True)
def _fresh_throttle_cache() -> Iterator[None]:
    """Rate-limit counters (core.throttling) live in the cache: every test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def _close_the_thread_sensitive_connection() -> Iterator[None]:
    """An async test's `sync_to_async(...)` calls (thread-sensitive, the default) run outside any
    request in asgiref's one process-wide thread, which outlives the test. The database connection
    they open there is that thread's own, and under PostgreSQL it stays checked out of psycopg's pool
    until something closes it in that thread — which a server does at the end of each request
    (request_finished) and Channels around each `database_sync_to_async` call, but a test never did.
    CI's PostgreSQL leg saw tests/security/test_unsized_form_bodies.py's leave one out through every
    sentinel test up to the two-lanes test (2 out at its start instead of 1). Closed after each test,
    in the thread that opened it, once the test's own fixtures and its database teardown are done."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=60)


@pytest.fixture(autouse=True)
def _channel_layers_per_event_loop() -> Iterator[None]:
    """Every async test runs on its own event loop, but Channels keeps one layer object per process,
    and channels-redis binds its locks and connections to the loop that first used them. A server
    has one loop for its life; tests get a fresh layer each, as a new server process would."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
