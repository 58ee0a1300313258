"""Sentinel's scrape-time connector metrics (sentinel/metrics.py) as /metrics shows them: what the
running connectors wrote to their rows, read in one query however many connectors there are."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from core.tokens import api_token_create
from sentinel.models import Connector

pytestmark = pytest.mark.django_db


@pytest.fixture
def scrape(client, admin_user):
    _, raw = api_token_create(user=admin_user, name="prometheus")

    def read() -> dict[tuple[str, frozenset], float]:
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {raw}", REMOTE_ADDR="10.9.9.9")
        assert response.status_code == 200, response.content
        return {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(response.content.decode())
            for sample in family.samples
        }

    return read


def connector(name: str, **status) -> Connector:
    return Connector.objects.create(
        name=name, kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:1883", **status
    )


def test_a_connectors_status_rate_and_counts_are_exposed(scrape):
    plant = connector(
        "plant-broker",
        status=Connector.Status.CONNECTED,
        messages_per_second=12.5,
        last_message_at=timezone.now() - timedelta(seconds=30),
        messages_total=900,
        samples_total=1800,
        unknown_tag_count=4,
    )
    connector("spare", enabled=False)
    samples = scrape()
    key = {("connector", "plant-broker"), ("kind", "mqtt_json")}
    assert samples[("aria_connector_status", frozenset({*key, ("status", "connected")}))] == 1
    assert samples[("aria_connector_status", frozenset({*key, ("status", "error")}))] == 0
    assert samples[("aria_connector_enabled", frozenset(key))] == 1
    assert samples[("aria_connector_messages_per_second", frozenset(key))] == 12.5
    assert samples[("aria_connector_last_message_age_seconds", frozenset(key))] >= 30
    assert samples[("aria_connector_messages_total", frozenset(key))] == 900
    assert samples[("aria_connector_samples_total", frozenset(key))] == 1800
    assert samples[("aria_connector_unknown_tags_total", frozenset(key))] == 4
    spare = {("connector", "spare"), ("kind", "mqtt_json")}
    assert samples[("aria_connector_enabled", frozenset(spare))] == 0
    assert samples[("aria_connector_status", frozenset({*spare, ("status", "stopped")}))] == 1
    assert ("aria_connector_last_message_age_seconds", frozenset(spare)) not in samples  # no message yet

    # The connector loses its broker: the next scrape says so.
    Connector.objects.filter(pk=plant.pk).update(status=Connector.Status.ERROR, last_error="refused")
    samples = scrape()
    assert samples[("aria_connector_status", frozenset({*key, ("status", "error")}))] == 1
    assert samples[("aria_connector_status", frozenset({*key, ("status", "connected")}))] == 0


def test_connector_metrics_cost_one_query_however_many_connectors(client, scrape):
    connector("a")
    scrape()  # warm: the token user's first use

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            scrape()
        return len(captured)

    few = queries()
    for i in range(20):
        connector(f"more-{i}", status=Connector.Status.CONNECTED)
    assert queries() == few
