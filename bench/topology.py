"""The production topology as separate processes, for bench/faults.py.

One fresh PostgreSQL database and one Redis database number; `manage.py migrate` and `seed_demo`;
then the web server (uvicorn), Celery worker(s) and Celery beat(s) as subprocesses, each in its own
process group (so a fault reaches a whole worker: its main process and its pool children). The web
process reaches Redis through `BrokerProxy`, a small TCP forwarder this process controls, so the
broker can be made unreachable for the web tier alone while the worker keeps the real Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def wait_for(check: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(interval)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def signal_group(popen: subprocess.Popen, sig: int) -> None:
    """`sig` to the process group `popen` leads (started with start_new_session=True)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, sig)


def stop_group(popen: subprocess.Popen, timeout: float = 20.0) -> None:
    """Stop the process group `popen` leads: SIGCONT (a paused process cannot act on SIGTERM) and
    SIGTERM, SIGKILL after `timeout`, then SIGKILL to what is left (pool children, server workers
    still closing their sockets, left behind by a main process that exited)."""
    if popen.poll() is None:
        signal_group(popen, signal.SIGCONT)
        signal_group(popen, signal.SIGTERM)
        try:
            popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            signal_group(popen, signal.SIGKILL)
            popen.wait()
    signal_group(popen, signal.SIGKILL)


def with_path(url: str, path: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + path))


def with_port(url: str, port: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.hostname}:{port}"))


def database_recreate(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(with_path(url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def database_drop(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(with_path(url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_flush(url: str) -> None:
    """Empty the bench's own Redis database number (queues, unacked messages, beat locks)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


class BrokerProxy:
    """A TCP forwarder to Redis on its own event loop thread. `close()` stops listening and drops
    every connection (clients get "connection refused"); `open()` listens on the same port again."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self._server: asyncio.base_events.Server | None = None
        self._links: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="broker-proxy", daemon=True)
        self._thread.start()

    def _call(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    def open(self) -> None:
        self._call(self._open())

    def close(self) -> None:
        self._call(self._close())

    @property
    def is_open(self) -> bool:
        return self._server is not None

    async def _open(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._link, "127.0.0.1", self.port, reuse_address=True)

    async def _close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for client, upstream in list(self._links):
            client.transport.abort()
            upstream.transport.abort()
        self._links.clear()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self._links.add(pair)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, ConnectionError, asyncio.IncompleteReadError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort() if not dst.is_closing() else None

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._links.discard(pair)

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
        self._loop.call_soon_threadsafe(self._loop.stop)


@dataclass
class Proc:
    role: str
    name: str
    cmd: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen | None = None
    starts: int = 0

    def start(self) -> Proc:
        self.starts += 1
        cmd = [part.replace("{start}", str(self.starts)) for part in self.cmd]
        handle = self.log.open("a")
        handle.write(f"\n==== start #{self.starts} at {time.strftime('%H:%M:%S')}: {' '.join(cmd)}\n")
        handle.flush()
        self.popen = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
        )
        handle.close()
        return self

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal_group(self, sig: int) -> None:
        """The whole process group: a prefork worker's children too (as when a container dies)."""
        if self.popen is not None:
            signal_group(self.popen, sig)

    def kill(self) -> None:
        self.signal_group(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait()

    def stop(self, timeout: float = 20.0) -> None:
        if self.alive:
            stop_group(self.popen, timeout)


@dataclass
class Topology:
    """The processes of one bench run. `env` is what every process shares; the web process gets
    REDIS_URL through the proxy."""

    database_url: str
    redis_url: str
    env: dict[str, str]
    var_dir: Path
    web_port: int = field(default_factory=free_port)
    procs: list[Proc] = field(default_factory=list)
    proxy: BrokerProxy | None = None
    worker_host: str = ""  # run workers under <this>-<start #> (needs unshare and root)

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {result.stderr[-2000:]}")
        return result.stdout

    def _proc(self, role: str, name: str, cmd: list[str], env: dict[str, str] | None = None) -> Proc:
        proc = Proc(role, name, cmd, env or self.env, self.var_dir / f"{name}.log")
        self.procs.append(proc)
        return proc

    def web(self) -> Proc:
        parts = urlsplit(self.redis_url)
        self.proxy = BrokerProxy(parts.hostname or "127.0.0.1", parts.port or 6379)
        self.proxy.open()
        env = {**self.env, "REDIS_URL": with_port(self.redis_url, self.proxy.port)}
        cmd = [str(BIN / "uvicorn"), "aria_project.asgi:application", "--host", "127.0.0.1",
               "--port", str(self.web_port), "--lifespan", "off", "--no-access-log", "--log-level", "warning"]  # fmt: skip
        return self._proc("web", "web", cmd, env).start()

    def worker(self, name: str = "worker-1") -> Proc:
        cmd = [str(BIN / "celery"), "-A", "aria_project", "worker", "-l", "info", "-n", f"faults-{name}@localhost"]
        if self.worker_host:  # a UTS namespace of its own, a new hostname per start: a replacement machine
            host = f"{self.worker_host}-{{start}}"
            cmd = ["unshare", "--uts", "sh", "-c", f'hostname {host} && exec "$@"', "sh", *cmd]
        return self._proc("worker", name, cmd).start()

    def beat(self, name: str = "beat-1") -> Proc:
        state = self.var_dir / name
        cmd = [str(BIN / "celery"), "-A", "aria_project", "beat", "-l", "info",
               "-s", str(state / "schedule"), "--pidfile", str(state / "beat.pid")]  # fmt: skip
        state.mkdir(exist_ok=True)
        return self._proc("beat", name, cmd).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def wait_web(self, timeout: float = 60.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return
            time.sleep(0.3)
        raise RuntimeError(f"the web server did not answer /healthz in {timeout:.0f}s (see {self.var_dir}/web.log)")

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        if self.proxy is not None:
            self.proxy.shutdown()
