"""OPC UA session (asyncua): data-change subscriptions on the mapped node ids, status codes,
security settings, reconnect with backoff. Runs its own asyncio loop in a thread."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime
from typing import Any

from asyncua import Client, ua

from sentinel.connectors.config import credentials, endpoint_host_problem, endpoint_port_problem
from sentinel.connectors.endpoints import CREDENTIALS_REFUSED, carries_credentials
from sentinel.connectors.feed import Feed

logger = logging.getLogger(__name__)

PUBLISHING_INTERVAL_MS = 200
RECONNECT_MIN_SECONDS = 0.5
RECONNECT_MAX_SECONDS = 30.0
CONNECTION_CHECK_SECONDS = 0.5


def node_key(node_id: str) -> str:
    """A node id in its canonical string form (so `ns=2;i=7` and `ns=2;i=7 ` map alike)."""
    return ua.NodeId.from_string(node_id.strip()).to_string()


def security_string(connector: Any) -> str | None:
    """asyncua's `Policy,Mode,certificate,private_key`, or None for mode None."""
    if connector.security_mode == "None":
        return None
    if not (connector.security_policy and connector.certificate_path and connector.private_key_path):
        raise ValueError("security mode Sign/SignAndEncrypt needs a security policy, certificate and private key")
    return ",".join(
        (connector.security_policy, connector.security_mode, connector.certificate_path, connector.private_key_path)
    )


class _Handler:
    """asyncua calls this for every data change of a monitored item."""

    def __init__(self, session: OpcUaSession) -> None:
        self.session = session

    def datachange_notification(self, node: Any, val: Any, data: Any) -> None:
        session = self.session
        source = session.sources.get(node.nodeid.to_string())
        session.feed.message()
        if source is None:
            return
        value = data.monitored_item.Value
        status = value.StatusCode
        if status is not None and not status.is_good():
            quality = "bad" if status.is_bad() else "uncertain"
            session.feed.bad_quality(source, f"{quality} status {status.name}")
            return
        if isinstance(val, bool) or not isinstance(val, int | float):
            session.feed.error(f"{source}: value is not a number ({type(val).__name__})")
            return
        stamp = value.SourceTimestamp or value.ServerTimestamp
        time = stamp.replace(tzinfo=UTC) if stamp is not None and stamp.tzinfo is None else stamp
        session.feed.sample(source, time or datetime.now(UTC), float(val))

    def status_change_notification(self, status: Any) -> None:
        """The server ended the subscription (e.g. BadShutdown when it stops): said in words, with
        the endpoint, like a failed connection."""
        code = getattr(status, "Status", status)
        name = getattr(code, "name", None) or str(code)
        self.session.feed.error(f"OPC UA {self.session.url}: subscription ended ({name})", status="error")


class OpcUaSession:
    def __init__(self, connector: Any, feed: Feed) -> None:
        if carries_credentials(connector.endpoint):
            raise ValueError(f"endpoint {CREDENTIALS_REFUSED}")
        problem = endpoint_port_problem(connector.endpoint) or endpoint_host_problem(connector.endpoint)
        if problem:
            raise ValueError(f"endpoint {problem}")
        self.feed = feed
        self.url = connector.endpoint
        self.security = security_string(connector)
        self.username, self.password = credentials(connector.username_env, connector.password_env)
        self.node_ids = sorted(feed.tags)
        self.sources = {node_key(n): n for n in self.node_ids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"opcua-{connector.pk}", daemon=True)

    def start(self) -> None:
        self.feed.status("connecting")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        delay = RECONNECT_MIN_SECONDS
        while not self._stop.is_set():
            try:
                await self._session()
                delay = RECONNECT_MIN_SECONDS
            except Exception as error:
                reason = str(error) or type(error).__name__
                self.feed.error(f"OPC UA {self.url}: {reason}", status="error")
            await self._sleep(delay)
            delay = min(RECONNECT_MAX_SECONDS, delay * 2)

    async def _sleep(self, seconds: float) -> None:
        end = asyncio.get_running_loop().time() + seconds
        while not self._stop.is_set() and asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.1)

    async def _session(self) -> None:
        client = Client(self.url, timeout=4)
        if self.username:
            client.set_user(self.username)
        if self.password:
            client.set_password(self.password)
        if self.security:
            await client.set_security_string(self.security)
        await client.connect()
        try:
            subscription = await client.create_subscription(PUBLISHING_INTERVAL_MS, _Handler(self))
            nodes = [client.get_node(node_id) for node_id in self.node_ids]
            if nodes:
                results = await subscription.subscribe_data_change(nodes)
                for node_id, result in zip(self.node_ids, results, strict=True):
                    if not isinstance(result, int):  # a StatusCode: the server refused this node
                        self.feed.error(f"{node_id}: cannot subscribe ({result})")
            self.feed.status("connected")
            while not self._stop.is_set():
                await client.check_connection()
                await asyncio.sleep(CONNECTION_CHECK_SECONDS)
        finally:
            try:
                await asyncio.wait_for(client.disconnect(), 2)
            except Exception:
                logger.debug("OPC UA disconnect from %s failed", self.url, exc_info=True)
