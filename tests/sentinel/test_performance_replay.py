"""The flood scenario replayed through the real ingest service with its own timestamps (the clock
travels with the samples, so every stamp the services write is the sample's time), then read back
through the alarm-performance API and page: the flood and its bad actors are there."""

from __future__ import annotations

import io
from datetime import datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from sentinel import seed
from sentinel.simulator import Simulator

pytestmark = pytest.mark.django_db(transaction=False)

REPLAY_SECONDS = 900  # the 10-minute scenario and 5 quiet minutes in which the flood ends


def replay_flood(start: datetime, *, seconds: int = REPLAY_SECONDS, seed_value: int = 7) -> None:
    """Seed the demo plant at `start`, then feed the flood scenario second by second after it."""
    with time_machine.travel(start, tick=False):
        seed.seed(io.StringIO())
    simulator = Simulator(scenario="flood", seed=seed_value, log=lambda message: None)
    for second in range(1, seconds + 1):
        at = start + timedelta(seconds=second)
        with time_machine.travel(at, tick=False):
            simulator.tick(at)


@pytest.fixture
def replayed(db):
    start = (timezone.now() - timedelta(hours=3)).replace(microsecond=0)
    replay_flood(start)
    return start


def test_the_api_shows_the_flood_and_its_bad_actors(replayed, client, operator):
    client.force_login(operator)
    response = client.get("/api/v1/alarm-performance", {"hours": 24})
    assert response.status_code == 200, response.content
    report = response.json()
    assert len(report["floods"]) == 1
    flood = report["floods"][0]
    start = datetime.fromisoformat(flood["start"])
    # the first pulses start at 20 % of the 10-minute ramp (2 min), the motor-current spikes at 1 min
    assert replayed + timedelta(minutes=1) <= start <= replayed + timedelta(minutes=3)
    assert flood["peak"] > 10 and not flood["ongoing"]
    # the fleeting spikes keep the rate at 5 or more until they stop (at 9 min); then it falls
    assert replayed + timedelta(minutes=10) < datetime.fromisoformat(flood["end"]) < replayed + timedelta(minutes=20)
    assert report["rate"]["max_per_10_min"] > 10
    assert report["rate"]["percent_time_in_flood"] > 0

    actors = {(a["cell_tag"], a["signal_key"]): a for a in report["bad_actors"]}
    top = report["bad_actors"][0]
    assert (top["cell_tag"], top["signal_key"]) == ("P-02", "motor_current_a")
    assert top["fleeting"] >= top["count"] // 2 and top["suggestion"]["field"] == "on_delay_seconds"
    assert top["suggestion"]["value"] in (5, 10)  # twice the longest fleeting alarm (1–3 s at 1 Hz), rounded up
    chatter = actors[("C-01", "discharge_pressure_bar")]
    assert chatter["chattering"] and chatter["suggestion"]["field"] == "deadband"
    assert chatter["suggestion"]["value"] > 0.1  # wider than the configured 0.1 bar
    assert len(report["bad_actors"]) == 10
    assert sum(a["share_percent"] for a in report["bad_actors"]) == pytest.approx(report["top10_share_percent"], 0.1)
    flagged = {(c["cell_tag"], c["signal_key"]) for c in report["chattering"]["items"]}
    assert ("C-01", "discharge_pressure_bar") in flagged and ("P-02", "motor_current_a") not in flagged
    # the page is the shell the browser test drives; it reads this API
    page = client.get("/alarms/performance/")
    assert page.status_code == 200 and b'data-api="/api/v1/alarm-performance"' in page.content


def test_a_suggestion_becomes_the_gated_limit_change_plan(replayed, client, operator):
    client.force_login(operator)
    report = client.get("/api/v1/alarm-performance", {"hours": 24}).json()
    suggestion = report["bad_actors"][0]["suggestion"]
    response = client.post("/api/v1/aria/plans", suggestion["plan"], content_type="application/json")
    assert response.status_code == 201, response.content
    change = [s for s in response.json()["steps"] if s["capability"] == "sentinel.change_signal_limits"]
    assert len(change) == 1
    inputs = change[0]["inputs"]
    assert (inputs["cell_tag"], inputs["signal_key"]) == ("P-02", "motor_current_a")
    assert inputs["on_delay_seconds"] == suggestion["value"]
    assert change[0]["tier"] == "gated"
    assert "cleared within 5 s" in inputs["reason"]
