"""/healthz and /readyz: JSON, per-check status, 503 when a dependency fails."""

import pytest

from core import views

pytestmark = pytest.mark.django_db(transaction=True)


def test_healthz_answers_without_login(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_checks_database_channel_layer_and_broker(client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "channel_layer", "broker"}
    assert all(check["status"] == "ok" for check in body["checks"].values())


def test_readyz_is_503_when_the_database_fails(client, monkeypatch):
    def broken() -> None:
        raise RuntimeError("database is down")

    monkeypatch.setattr(views, "_check_database", broken)
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert body["checks"]["database"]["status"] == "fail"
    assert "database is down" in body["checks"]["database"]["detail"]
    assert body["checks"]["broker"]["status"] == "ok"


def test_readyz_is_503_when_the_channel_layer_hangs(client, monkeypatch):
    async def hangs() -> None:
        import asyncio

        await asyncio.sleep(10)

    monkeypatch.setattr(views, "_check_channel_layer", hangs)
    monkeypatch.setattr(views, "CHECK_TIMEOUT_SECONDS", 0.1)
    response = client.get("/readyz")
    assert response.status_code == 503
    check = response.json()["checks"]["channel_layer"]
    assert (check["status"], check["detail"]) == ("fail", "timed out")
    # Cut off by the 0.1 s timeout, not the 10 s hang (a loaded CI host may add some delay).
    assert 90 <= check["ms"] < 5000


def test_event_feed_requires_login_and_replays_recent_events(client, operator):
    assert client.get("/events/").status_code == 302
    client.force_login(operator)
    page = client.get("/events/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="live-feed"' in html and 'data-replay-after="0"' in html
    assert "aria/events.js" in html and "<script>" not in html  # CSP: no inline scripts
