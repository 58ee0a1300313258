"""docs/grafana/aria.json: valid dashboard JSON whose every query names a metric /metrics serves."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.tokens import api_token_create

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "aria.json"
# Served only with a Redis broker (tests/core/test_metrics.py checks it against Redis).
REDIS_ONLY = {"aria_celery_queue_length"}


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["templating"]["list"][0]["type"] == "datasource"
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_every_panel_queries_prometheus_through_the_datasource_variable():
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(panels) >= 15
    assert all(p["datasource"]["uid"] == "${datasource}" and p["targets"] for p in panels)
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))


@pytest.mark.django_db
def test_every_metric_the_dashboard_reads_is_exposed(client, admin_user):
    _, raw = api_token_create(user=admin_user, name="grafana-check")
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {raw}").content.decode()
    served: set[str] = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.M):
        served.add(name)
        if kind == "histogram":
            served |= {f"{name}_bucket", f"{name}_count", f"{name}_sum"}
    read = {name for expr in dashboard_queries() for name in re.findall(r"\baria_[a-z_]+\b", expr)}
    assert read - REDIS_ONLY <= served, sorted(read - REDIS_ONLY - served)
    assert len(read) >= 20
