import json
from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.models import SignalSample
from sentinel.services import alarm_raise
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import make_signal, set_latest

pytestmark = pytest.mark.django_db


def post(client, url, body=None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    return alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())


@pytest.mark.parametrize(
    "url",
    ["/api/v1/cells", "/api/v1/signals/latest", "/api/v1/signals/1/trends", "/api/v1/alarms", "/api/v1/alarms/1"],
)
def test_reads_need_authentication_and_the_operator_scope(client, make_user, url):
    assert client.get(url).status_code == 401
    client.force_login(make_user("visitor"))
    response = client.get(url)
    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"


def test_actions_need_the_operator_scope(client, approver, alarm):
    assert post(client, f"/api/v1/alarms/{alarm.pk}/acknowledge").status_code == 401
    client.force_login(approver)
    assert post(client, f"/api/v1/alarms/{alarm.pk}/acknowledge").status_code == 403


def test_cells_list_signals_latest_and_alarm_counts(api_client, vibration, pressure, alarm):
    set_latest(pressure, 6.2)
    body = api_client.get("/api/v1/cells").json()
    [cell] = body
    assert cell["tag"] == "P-02" and cell["active_alarm_count"] == 1
    by_key = {s["key"]: s for s in cell["signals"]}
    assert by_key["vibration_mm_s"]["value"] == 5.0
    assert by_key["vibration_mm_s"]["thresholds"]["alert"] == 4.5
    assert by_key["discharge_pressure_bar"]["thresholds"]["low_alert"] == 3.0
    latest = api_client.get(f"/api/v1/signals/latest?cell_id={cell['id']}").json()
    assert {row["key"]: row["value"] for row in latest} == {"discharge_pressure_bar": 6.2, "vibration_mm_s": 5.0}


def test_trends_are_bucketed_in_the_database(api_client, vibration):
    now = timezone.now()
    SignalSample.objects.bulk_create(
        [SignalSample(signal=vibration, time=now - timedelta(seconds=s), value=float(s % 7)) for s in range(1, 600)]
    )
    SignalSample.objects.create(signal=vibration, time=now - timedelta(hours=2), value=99.0)  # outside the window
    body = api_client.get(f"/api/v1/signals/{vibration.pk}/trends?minutes=10&buckets=10").json()
    assert body["bucket_seconds"] == 60 and len(body["points"]) == 10
    assert sum(p["count"] for p in body["points"]) == 599
    for point in body["points"]:
        if point["count"]:
            assert point["min"] <= point["avg"] <= point["max"] <= 6
    assert body["thresholds"]["alert"] == 4.5


def test_trends_bad_input_and_unknown_signal(api_client, vibration):
    response = api_client.get(f"/api/v1/signals/{vibration.pk}/trends?minutes=0")
    assert response.status_code == 422 and response.json()["field"] == "minutes"
    response = api_client.get(f"/api/v1/signals/{vibration.pk}/trends?buckets=5000")
    assert response.status_code == 422 and response.json()["field"] == "buckets"
    assert api_client.get("/api/v1/signals/999999/trends").status_code == 404


def test_alarm_list_filters(api_client, alarm, cell):
    other = make_signal(cell, "flow_m3_h", low_alert=60.0, alert=180.0, trip=None)
    set_latest(other, 40.0)
    alarm_raise(signal=other, breach=evaluate_threshold(other, 40.0), value=40.0, time=timezone.now())
    assert len(api_client.get("/api/v1/alarms?state=open").json()) == 2
    assert len(api_client.get(f"/api/v1/alarms?cell_id={cell.pk}&severity=alert").json()) == 2
    assert api_client.get("/api/v1/alarms?state=cleared").json() == []
    assert len(api_client.get("/api/v1/alarms?cell=P-02&state=active_unack,acknowledged").json()) == 2
    assert api_client.get("/api/v1/alarms?cell=C-01").json() == []
    response = api_client.get("/api/v1/alarms?state=exploded")
    assert response.status_code == 422 and response.json()["field"] == "state"
    response = api_client.get("/api/v1/alarms?severity=mild")
    assert response.status_code == 422 and response.json()["field"] == "severity"


def test_an_empty_severity_is_refused_as_the_schema_says(api_client, alarm):
    """The schema lists the severities (no ""): CI's fuzzer sent `?severity=` and got 200 with every alarm."""
    response = api_client.get("/api/v1/alarms?severity=")
    assert response.status_code == 422 and response.json()["field"] == "severity"


def test_the_alarm_list_pages_back_past_its_limit(api_client, cell):
    """At most 500 per request, newest first: the alarms behind the newest 500 could not be read at all."""
    signals = [make_signal(cell, f"signal_{i}", alert=1.0, trip=None) for i in range(4)]
    start = timezone.now() - timedelta(hours=1)
    for i, signal in enumerate(signals):
        set_latest(signal, 2.0)
        at = start + timedelta(minutes=i)
        alarm_raise(signal=signal, breach=evaluate_threshold(signal, 2.0), value=2.0, time=at)
    pages = [api_client.get(f"/api/v1/alarms?limit=3&offset={offset}").json() for offset in (0, 3, 4)]
    assert [[a["signal_key"] for a in page] for page in pages] == [
        ["signal_3", "signal_2", "signal_1"],
        ["signal_0"],
        [],
    ]
    for bad in ("-1", "100001", "x"):
        response = api_client.get(f"/api/v1/alarms?offset={bad}")
        assert response.status_code == 422 and response.json()["field"] == "offset", bad


def test_an_alarm_detail_carries_its_newest_events_and_their_total(api_client, alarm, operator):
    """Each shelve/unshelve cycle adds two events, and every action answered with all of them."""
    from sentinel.api import MAX_DETAIL_EVENTS
    from sentinel.models import AlarmEvent

    cycles = [
        AlarmEvent(alarm=alarm, from_state="active_unack", to_state="active_unack", actor=operator, comment=f"#{i}")
        for i in range(MAX_DETAIL_EVENTS + 4)
    ]
    AlarmEvent.objects.bulk_create(cycles)
    body = api_client.get(f"/api/v1/alarms/{alarm.pk}").json()
    assert body["events_total"] == MAX_DETAIL_EVENTS + 5  # the raise and the cycles
    assert len(body["events"]) == MAX_DETAIL_EVENTS
    assert [e["comment"] for e in body["events"][:1] + body["events"][-1:]] == ["#4", f"#{MAX_DETAIL_EVENTS + 3}"]
    body = post(api_client, f"/api/v1/alarms/{alarm.pk}/acknowledge", {"comment": "seen"}).json()
    assert (len(body["events"]), body["events_total"], body["events"][-1]["to_state"]) == (
        MAX_DETAIL_EVENTS,
        MAX_DETAIL_EVENTS + 6,
        "acknowledged",
    )


def test_acknowledge_shelve_unshelve_out_of_service_flow(api_client, alarm):
    base = f"/api/v1/alarms/{alarm.pk}"
    body = post(api_client, f"{base}/acknowledge", {"comment": "on it"}).json()
    assert body["state"] == "acknowledged" and body["acknowledged_by"] == "olga"
    assert body["acknowledge_comment"] == "on it"
    body = post(api_client, f"{base}/shelve", {"minutes": 60, "comment": "crew on the way"}).json()
    assert body["state"] == "shelved" and body["shelved_until"]
    body = post(api_client, f"{base}/unshelve").json()
    assert body["state"] == "acknowledged"
    body = post(api_client, f"{base}/shelve", {"until_work_order_closes": True, "comment": "WO open"}).json()
    assert body["shelved_until_work_order_closes"] is True
    body = post(api_client, f"{base}/out-of-service", {"comment": "instrument swap"}).json()
    assert body["state"] == "out_of_service"
    body = post(api_client, f"{base}/return-to-service").json()
    assert body["state"] == "active_unack"
    detail = api_client.get(base).json()
    assert [e["to_state"] for e in detail["events"]] == [
        "active_unack",
        "acknowledged",
        "shelved",
        "acknowledged",
        "shelved",
        "out_of_service",
        "active_unack",
    ]


def test_illegal_transition_is_409_with_the_allowed_states(api_client, alarm):
    post(api_client, f"/api/v1/alarms/{alarm.pk}/acknowledge")
    response = post(api_client, f"/api/v1/alarms/{alarm.pk}/acknowledge")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "illegal_transition" and body["state"] == "acknowledged"
    assert body["allowed"] == ["cleared", "out_of_service", "shelved"]
    response = post(api_client, f"/api/v1/alarms/{alarm.pk}/unshelve")
    assert response.status_code == 409


def test_shelve_bad_input_names_the_field(api_client, alarm):
    response = post(api_client, f"/api/v1/alarms/{alarm.pk}/shelve", {"comment": "known"})
    assert response.status_code == 422 and response.json()["field"] == "minutes"
    response = post(api_client, f"/api/v1/alarms/{alarm.pk}/shelve", {"minutes": 0, "comment": "known"})
    assert response.status_code == 422 and response.json()["field"] == "minutes"
    response = post(api_client, f"/api/v1/alarms/{alarm.pk}/shelve", {"minutes": "soon", "comment": "known"})
    assert response.status_code == 422 and response.json()["field"] == "minutes"


def test_unknown_alarm_is_404(api_client):
    assert api_client.get("/api/v1/alarms/999999").status_code == 404
    assert post(api_client, "/api/v1/alarms/999999/acknowledge").status_code == 404


def test_acknowledge_of_a_shelved_alarm_is_409_and_keeps_it_shelved(api_client, alarm, operator):
    base = f"/api/v1/alarms/{alarm.pk}"
    first = post(api_client, f"{base}/acknowledge", {"comment": "seen"}).json()
    post(api_client, f"{base}/shelve", {"minutes": 30, "comment": "known"})
    response = post(api_client, f"{base}/acknowledge", {"comment": "again"})
    assert response.status_code == 409
    body = response.json()
    assert (body["code"], body["state"]) == ("illegal_transition", "shelved")
    assert body["allowed"] == ["active_unack", "cleared", "out_of_service"]
    detail = api_client.get(base).json()
    assert detail["state"] == "shelved"
    assert (detail["acknowledged_at"], detail["acknowledge_comment"]) == (first["acknowledged_at"], "seen")


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/alarms/999999", "alarm_id"),
        ("/api/v1/alarms/999999/acknowledge", "alarm_id"),
        ("/api/v1/signals/999999/trends", "signal_id"),
    ],
)
def test_unknown_ids_in_the_path_are_404_naming_the_field(api_client, url, field):
    response = post(api_client, url) if url.endswith("acknowledge") else api_client.get(url)
    assert response.status_code == 404
    assert response.json() == {"detail": response.json()["detail"], "code": "not_found", "field": field}


@pytest.mark.parametrize("flag", ["yes", "true", 1, "false"])
def test_shelve_until_the_work_order_closes_takes_only_a_json_boolean(api_client, alarm, flag):
    """ "yes" used to shelve the alarm (pydantic's lax bool); now a 422 naming the field, state unchanged."""
    response = post(
        api_client, f"/api/v1/alarms/{alarm.pk}/shelve", {"until_work_order_closes": flag, "comment": "known"}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["field"] == "until_work_order_closes" and body["detail"].startswith("until_work_order_closes:")
    alarm.refresh_from_db()
    assert alarm.state == "active_unack" and not alarm.shelved_until_work_order_closes
    assert not alarm.events.filter(to_state="shelved").exists()
