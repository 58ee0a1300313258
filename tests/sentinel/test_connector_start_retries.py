"""A connector that cannot start keeps being tried, however long it keeps failing.

The retry delay was START_RETRY_SECONDS * 2**failed_starts capped at 5 minutes, but the count kept
growing: at the 1,025th failed start (about 3.5 days at the cap) 2**1024 no longer converts to a
float, so the OverflowError escaped the start's own error handling, the reload stopped there, and
the connector sat in `running` with no retry time — never tried again, its row still saying
'retry in 300 s'. Now the exponent stops growing once the cap is reached."""

from __future__ import annotations

import pytest

from sentinel.connectors.supervisor import START_RETRY_MAX_SECONDS, ConnectorSupervisor
from sentinel.models import Connector
from tests.sentinel.connector_helpers import status_of, unique

pytestmark = pytest.mark.django_db


def test_a_start_failing_for_days_is_still_retried_at_the_cap():
    clock = [1000.0]
    supervisor = ConnectorSupervisor(log=lambda message: None, clock=lambda: clock[0])
    connector = Connector.objects.create(
        name=unique("aria-test"),
        kind=Connector.Kind.MQTT_JSON,
        endpoint="mqtt://127.0.0.1:1883",
        topic_filter="aria-test/#",
        username_env="ARIA_CONNECTOR_TEST_NEVER_SET",  # build_session refuses before any network I/O
    )
    try:
        supervisor.reload()
        for attempt in range(2, 1_101):  # each reload due: the cap has passed
            clock[0] += START_RETRY_MAX_SECONDS + 1
            supervisor.reload()
            assert supervisor.running[connector.pk].failed_starts == attempt
        supervisor.tick()
        assert status_of(connector) == Connector.Status.ERROR
        assert connector.last_error.endswith(f"(retry in {START_RETRY_MAX_SECONDS:g} s)")
    finally:
        supervisor.stop_all()
