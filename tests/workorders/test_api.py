import json

import pytest
from django.utils import timezone

from core.models import AgentRun, AuditRecord
from tests.workorders import factories as f
from workorders.models import ProductionRecord

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"


@pytest.fixture
def api(client, operator):
    client.force_login(operator)
    return client


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_routes_need_authentication_and_the_operator_scope(client, make_user, cell):
    assert client.get(BASE).status_code == 401
    client.force_login(make_user("nobody"))
    response = client.get(BASE)
    assert response.status_code == 403 and response.json()["code"] == "missing_scope"


def test_list_filters_by_status_cell_and_priority(api, cell):
    other = f.make_cell("C-01")
    a = f.make_work_order(cell, priority="high")
    f.make_work_order(cell, status="open")
    f.make_work_order(other, priority="high")
    body = api.get(BASE, {"status": "detected", "cell": "P-02", "priority": "high"}).json()
    assert body["count"] == 1 and [w["id"] for w in body["items"]] == [a.pk]
    assert api.get(BASE, {"cell_id": other.pk}).json()["count"] == 1
    bad = api.get(BASE, {"status": "nope"})
    assert bad.status_code == 422 and bad.json()["field"] == "status"


def test_detail_has_rca_events_and_agent_runs(api, cell):
    wo = f.make_work_order(cell, rca_summary="bearing_wear: worn", confidence=0.9)
    AgentRun.objects.create(
        agent="investigator", turn_id="t1", engine="fake", subject_type="work_order", subject_id=str(wo.pk)
    )
    body = api.get(f"{BASE}/{wo.pk}").json()
    assert (body["rca_summary"], body["confidence"]) == ("bearing_wear: worn", 0.9)
    assert body["allowed_transitions"] == ["analyzed", "cancelled"]
    assert [r["agent"] for r in body["agent_runs"]] == ["investigator"]
    assert body["events"] == [] and body["failures"] == []
    missing = api.get(f"{BASE}/999999")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_transition_moves_the_order_and_409_lists_the_allowed_moves(api, cell):
    wo = f.make_work_order(cell)
    body = {"to_status": "analyzed", "note": "manual RCA", "rca_summary": "bearing_wear: DE bearing worn"}
    ok = post(api, f"{BASE}/{wo.pk}/transition", body)
    assert ok.status_code == 200
    assert ok.json()["status"] == "analyzed"
    assert ok.json()["events"][0] | {"time": None} == {
        "from_status": "detected", "to_status": "analyzed", "actor": "olga", "note": "manual RCA", "time": None,
    }  # fmt: skip
    assert AuditRecord.objects.filter(action="work_order.transition", actor_label="olga").count() == 1

    illegal = post(api, f"{BASE}/{wo.pk}/transition", {"to_status": "completed"})
    assert illegal.status_code == 409
    assert illegal.json()["allowed"] == ["open", "in_progress", "cancelled"]
    assert illegal.json()["code"] == "illegal_transition"

    unknown = post(api, f"{BASE}/{wo.pk}/transition", {"to_status": "done"})
    assert unknown.status_code == 422 and unknown.json()["field"] == "to_status"
    assert post(api, f"{BASE}/{wo.pk}/transition", {}).status_code == 422


def test_failures_kb_and_kpis(api, plant):
    failures = api.get(f"{BASE}/failures", {"cell_id": plant.pk, "failure_mode": "bearing_wear"}).json()
    assert failures["count"] == 1 and failures["items"][0]["signal_patterns"]["vibration_mm_s"]["peak"] == 5.4

    kb = api.get(f"{BASE}/kb/{plant.pk}").json()
    assert "bearing_wear" in kb["data"]["failure_modes"]
    patched = api.patch(
        f"{BASE}/kb/{plant.pk}",
        json.dumps({"patch": {"notes": "re-greased", "equipment": None}, "note": "round"}),
        content_type="application/json",
    )
    assert patched.status_code == 200
    assert patched.json()["data"]["notes"] == "re-greased" and "equipment" not in patched.json()["data"]
    assert patched.json()["calibration_log"][-1]["actor"] == "olga"
    bad = api.patch(f"{BASE}/kb/{plant.pk}", json.dumps({"patch": "x"}), content_type="application/json")
    assert bad.status_code == 422
    assert api.get(f"{BASE}/kb/999999").status_code == 404

    ProductionRecord.objects.create(
        cell=plant,
        date=timezone.localdate(),
        shift="morning",
        planned_time_min=480,
        run_time_min=480,
        ideal_cycle_time_s=60,
        total_count=480,
        good_count=480,
    )
    kpis = api.get(f"{BASE}/kpis", {"cell_id": plant.pk, "days": 90}).json()["items"][0]
    assert kpis["cell_tag"] == "P-02"
    assert kpis["oee"]["oee"] == 1.0
    assert kpis["mtbf"]["failures"] == 3 and kpis["mttr"]["mttr_hours"] == 4.0
    assert api.get(f"{BASE}/kpis", {"days": 0}).status_code == 422
