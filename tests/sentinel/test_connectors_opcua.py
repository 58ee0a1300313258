"""OPC UA against a real asyncua server started by the test: data-change subscriptions become
samples, a bad or uncertain status flags the value (not stored) and makes the signal stale, and
the connector reconnects after the server restarts."""

from __future__ import annotations

import asyncio
import threading

import pytest
from asyncua import Server, ua

from sentinel.connectors.feed import Feed
from sentinel.connectors.opcua import _Handler
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Connector, ConnectorTag, SignalLatest, SignalSample, StaleCondition
from tests.browser.live_server import free_port
from tests.sentinel.connector_helpers import pump, status_of, unique

pytestmark = pytest.mark.django_db
NODE_ID = "ns=2;s=P02.Vibration"


class OpcUaTestServer:
    """An asyncua server in its own thread and event loop, with one Double variable."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"opc.tcp://127.0.0.1:{port}/aria/"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: Server | None = None
        self.variable = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        ready = threading.Event()
        self.loop = asyncio.new_event_loop()

        def run() -> None:
            assert self.loop is not None
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self._start())
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="opcua-test-server", daemon=True)
        self.thread.start()
        assert ready.wait(30), "asyncua server did not start"

    async def _start(self) -> None:
        self.server = Server()
        await self.server.init()
        self.server.set_endpoint(self.url)
        self.server.set_security_policy([ua.SecurityPolicyType.NoSecurity])
        index = await self.server.register_namespace("urn:aria:test")
        assert index == 2
        pump_object = await self.server.nodes.objects.add_object(index, "P02")
        self.variable = await pump_object.add_variable(ua.NodeId.from_string(NODE_ID), "Vibration", 2.0)
        await self.server.start()

    def _call(self, coroutine) -> None:
        assert self.loop is not None
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    def write(self, value: float, status: int = ua.StatusCodes.Good) -> None:
        data = ua.DataValue(ua.Variant(value, ua.VariantType.Double), StatusCode=ua.StatusCode(status))
        self._call(self.variable.write_value(data))

    @staticmethod
    async def _cancel_the_rest() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def stop(self) -> None:
        if self.loop is None:
            return
        self._call(self.server.stop())
        self._call(self._cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
        self.loop = None


@pytest.fixture(scope="module")
def shared_opcua_server():
    server = OpcUaTestServer(free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def opcua_server(shared_opcua_server):
    shared_opcua_server.write(2.0)  # every test starts from a good 2.0
    return shared_opcua_server


@pytest.fixture
def supervisor():
    supervisor = ConnectorSupervisor(log=lambda message: None)
    yield supervisor
    supervisor.stop_all()


def opcua_connector(url: str, signal, *, scale: float = 1.0, source: str = NODE_ID) -> Connector:
    connector = Connector.objects.create(name=unique("opcua"), kind=Connector.Kind.OPCUA, endpoint=url)
    ConnectorTag.objects.create(connector=connector, source=source, signal=signal, scale=scale)
    return connector


def _values(signal) -> list[float]:
    return sorted(SignalSample.objects.filter(signal=signal).values_list("value", flat=True))


def test_a_data_change_becomes_a_sample(opcua_server, supervisor, vibration):
    connector = opcua_connector(opcua_server.url, vibration, scale=2.0)
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED, 20), connector.last_error
    assert pump(supervisor, lambda: _values(vibration) == [4.0])  # the initial value, scaled
    opcua_server.write(2.4)
    assert pump(supervisor, lambda: _values(vibration) == [4.0, 4.8])
    connector.refresh_from_db()
    assert connector.samples_total == 2 and connector.last_message_at is not None


@pytest.mark.parametrize("status", [ua.StatusCodes.BadSensorFailure, ua.StatusCodes.UncertainLastUsableValue])
def test_a_bad_or_uncertain_status_flags_the_value_and_makes_the_signal_stale(
    opcua_server, supervisor, vibration, status
):
    connector = opcua_connector(opcua_server.url, vibration)
    assert pump(supervisor, lambda: _values(vibration) == [2.0], 20), status_of(connector)
    opcua_server.write(9.9, status)  # a value past the trip limit, but the source says it is not good

    assert pump(supervisor, lambda: SignalLatest.objects.get(signal=vibration).stale)
    assert _values(vibration) == [2.0]  # never stored as a measurement, so no false alarm
    assert StaleCondition.objects.filter(signal=vibration, cleared_at__isnull=True).exists()
    connector.refresh_from_db()
    assert connector.bad_quality_count == 1
    assert ("bad" if status == ua.StatusCodes.BadSensorFailure else "uncertain") in connector.last_error

    opcua_server.write(2.2)  # good again: fresh data ends the staleness
    assert pump(supervisor, lambda: not SignalLatest.objects.get(signal=vibration).stale)


def test_the_connector_reconnects_after_the_server_restarts(supervisor, vibration):
    server = OpcUaTestServer(free_port())
    server.start()
    try:
        connector = opcua_connector(server.url, vibration)
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED, 20)
        server.stop()
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR, 20)
        assert server.url in connector.last_error

        server.start()
        server.write(3.1)
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED, 30)
        assert pump(supervisor, lambda: 3.1 in _values(vibration), 10)
    finally:
        server.stop()


def test_an_unknown_node_id_is_an_error_not_a_crash(opcua_server, supervisor, vibration):
    connector = opcua_connector(opcua_server.url, vibration, source="ns=2;s=Nope")
    assert pump(supervisor, lambda: "cannot subscribe" in Connector.objects.get(pk=connector.pk).last_error, 20)
    assert status_of(connector) == Connector.Status.CONNECTED


def test_a_malformed_node_id_is_reported_on_the_connector(supervisor, vibration):
    connector = opcua_connector("opc.tcp://127.0.0.1:9/", vibration, source="not a node id")
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR)
    assert connector.last_error.startswith("cannot start: ")


def test_sign_and_encrypt_without_a_certificate_is_refused_with_a_reason(supervisor, vibration):
    connector = opcua_connector("opc.tcp://127.0.0.1:9/", vibration)
    Connector.objects.filter(pk=connector.pk).update(security_mode="SignAndEncrypt", security_policy="Basic256Sha256")
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR)
    assert "needs a security policy, certificate and private key" in connector.last_error


def test_a_subscription_the_server_ends_is_an_error_that_names_the_endpoint_and_the_status():
    """What the server sends when it shuts down (a StatusChangeNotification) reads as a reason,
    not a repr: the endpoint and the status code's name."""

    class _Session:
        feed = Feed({})
        url = "opc.tcp://plant-1:4840/"

    _Handler(_Session()).status_change_notification(ua.StatusChangeNotification(Status=ua.StatusCode(0x800C0000)))
    drained = _Session.feed.drain()
    assert drained.status == "error"
    assert drained.last_error == "OPC UA opc.tcp://plant-1:4840/: subscription ended (BadShutdown)"
