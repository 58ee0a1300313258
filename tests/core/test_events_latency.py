"""Embedded mode, real server: an event published from a worker thread (no event loop) inside
daphne reaches a WebSocket client within 200 ms through the in-memory channel layer."""

import json
import time

import pytest
from websockets.sync.client import connect

from tests.browser.live_server import start_live_server

LATENCY_BUDGET_SECONDS = 0.2


@pytest.fixture(scope="module")
def aria_server(tmp_path_factory):
    # A long outbox tail: only the channel-layer fast path can meet the budget.
    server = start_live_server(tmp_path_factory.mktemp("latency"), {"ARIA_EVENTS_TAIL_SECONDS": "30"})
    yield server
    server.stop()


def test_worker_thread_event_reaches_websocket_within_200ms(aria_server):
    aria_server.create_user("lat", "latency-pass-1", "operator")
    session = aria_server.login_cookie("lat", "latency-pass-1")
    headers = {"Cookie": f"sessionid={session}", "Origin": aria_server.url}
    with connect(aria_server.ws_url + "/ws/events", additional_headers=headers, open_timeout=10) as ws:
        # Warm up the server's loop and the fan-out; retried so one slow start cannot fail the
        # test before anything is measured.
        for attempt in range(20):
            aria_server.publish("work_order_ready", {"work_order_id": -attempt})
            try:
                if json.loads(ws.recv(timeout=0.5))["work_order_id"] <= 0:
                    break
            except TimeoutError:
                continue
        else:
            pytest.fail(f"no warm-up event arrived: {aria_server.log()}")
        latencies, slow = [], []
        n = 0
        while len(latencies) < 10:
            n += 1
            started = time.perf_counter()
            aria_server.publish("work_order_ready", {"work_order_id": n})
            frame = json.loads(ws.recv(timeout=5))
            while frame["work_order_id"] <= 0:  # a late warm-up frame
                frame = json.loads(ws.recv(timeout=5))
            elapsed = time.perf_counter() - started
            assert frame["type"] == "work_order_ready" and frame["work_order_id"] == n
            # A shared CI host may stall one sample; at most two are re-measured. The cross-loop
            # bug this guards against delays every event by a second or more, so it cannot hide.
            if elapsed >= LATENCY_BUDGET_SECONDS and len(slow) < 2:
                slow.append(elapsed)
            else:
                latencies.append(elapsed)
            time.sleep(0.05)  # let the server's loop go idle: the cross-loop bug shows only then
    assert max(latencies) < LATENCY_BUDGET_SECONDS, (latencies, slow, aria_server.log())
