"""The real system for end-to-end tests: daphne serving aria_project.asgi:application.

`start_live_server(var_dir)` gives `var_dir` a migrated file SQLite database (a copy of one migrated
once per test process and set of extra settings: `migrated_database`) and starts this
module as a subprocess: daphne's `Server` (what the `daphne` command runs) on a free port, in
the embedded mode (in-memory channel layer; DATABASE_URL, REDIS_URL and ARIA_ENV unset). The
subprocess also reads JSON lines on stdin, `{"type": ..., "payload": ...}`, and publishes each
from a plain worker thread — the way a Celery thread-pool worker inside the web process does.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
_DROPPED_ENV = ("DATABASE_URL", "REDIS_URL", "ARIA_ENV", "DJANGO_SETTINGS_MODULE", "ARIA_CELERY_EAGER")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def embedded_env(var_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(
        {"ARIA_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "aria_project.settings", "PYTHONUNBUFFERED": "1"}
    )
    env.update(extra or {})
    return env


@dataclass
class LiveServer:
    url: str
    env: dict[str, str]
    process: subprocess.Popen
    log_path: Path
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://", 1)

    def manage(self, *args: str) -> str:
        """Run a manage.py command against the same database; returns its stdout."""
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def create_user(self, username: str, password: str, *scopes: str) -> None:
        code = (
            "from django.contrib.auth.models import Group, User\n"
            f"u = User.objects.create_user({username!r}, password={password!r})\n"
            f"for s in {list(scopes)!r}: u.groups.add(Group.objects.get_or_create(name=s)[0])\n"
        )
        self.manage("shell", "-c", code)

    def login_cookie(self, username: str, password: str) -> str:
        """Log in through the login page; returns the session id."""
        with httpx.Client(base_url=self.url, timeout=10) as client:
            page = client.get("/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
            client.post("/login/", data={"username": username, "password": password, "csrfmiddlewaretoken": token})
            session = client.cookies.get("sessionid")
        if not session:
            raise RuntimeError(f"login as {username} failed")
        return session

    def publish(self, event_type: str, payload: dict) -> None:
        """Ask the server process to publish from its worker thread (returns without waiting)."""
        with self._lock:
            self.process.stdin.write(json.dumps({"type": event_type, "payload": payload}) + "\n")
            self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        with contextlib.suppress(Exception):
            self.process.stdin.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


DATABASE_FILE = "aria.sqlite3"  # the embedded database under ARIA_VAR_DIR (aria_project/settings.py)
_migrated: dict[tuple[tuple[str, str], ...], Path] = {}


def migrated_database(extra_env: dict[str, str] | None = None) -> Path:
    """A database file `manage.py migrate` built under these extra settings, once per test process:
    the migrations took ~3-6 s of each of ~20 servers' start. Each server gets its own copy (and
    its own secret key, written beside it on start), so no server sees another's rows."""
    key = tuple(sorted((extra_env or {}).items()))
    if key not in _migrated:
        template = Path(tempfile.mkdtemp(prefix="aria-migrated-"))
        atexit.register(shutil.rmtree, template, True)
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=embedded_env(template, extra_env),
            check=True,
            timeout=300,
        )
        _migrated[key] = template / DATABASE_FILE
    return _migrated[key]


def start_live_server(var_dir: Path, extra_env: dict[str, str] | None = None, timeout: float = 60.0) -> LiveServer:
    var_dir.mkdir(parents=True, exist_ok=True)
    env = embedded_env(var_dir, extra_env)
    template = migrated_database(extra_env)
    for suffix in ("", "-wal"):  # a write-ahead log left beside it holds part of the database
        if Path(f"{template}{suffix}").exists():
            shutil.copy(f"{template}{suffix}", var_dir / f"{DATABASE_FILE}{suffix}")  # mode 0600 kept
    port = free_port()
    log_path = var_dir / "server.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.browser.live_server", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = LiveServer(url=f"http://127.0.0.1:{port}", env=env, process=process, log_path=log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server did not answer /healthz within {timeout}s:\n{server.log()}")


def _publish_commands() -> None:
    """Publish each stdin line from this thread: no event loop here, like a Celery worker thread."""
    from django.db import close_old_connections, transaction

    from core.events import publish

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            command = json.loads(line)
            with transaction.atomic():
                event = publish(command["type"], command["payload"])
            print(f"published #{event.pk} {event.type}", flush=True)
        except Exception as exc:
            print(f"publish failed: {exc!r}", file=sys.stderr, flush=True)
        finally:
            close_old_connections()


def serve(port: int) -> None:
    from daphne.server import Server  # installs the asyncio reactor: first
    from django.conf import settings
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from aria_project.asgi import application

    # As `manage.py runaria` does in development: static files from the same server.
    app = ASGIStaticFilesHandler(application) if settings.DEBUG else application
    threading.Thread(target=_publish_commands, name="publisher", daemon=True).start()
    Server(application=app, endpoints=[f"tcp:port={port}:interface=127.0.0.1"], verbosity=1).run()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    serve(parser.parse_args().port)
