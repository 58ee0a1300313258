"""Work execution over HTTP: operators act, approvers read, bad input is 4xx JSON naming the field."""

from __future__ import annotations

import json

import pytest

from tests.workorders.execution_helpers import analysed_order, report, shift_covering
from workorders.models import CompletionReport

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"


def post(client, url, body=None):
    return client.post(url, json.dumps(body or {}), content_type="application/json")


def test_operator_assigns_starts_and_completes_over_http(client, operator, cell):
    wo = analysed_order(cell)
    shift = shift_covering(wo)
    client.force_login(operator)

    roster = client.get(f"{BASE}/{wo.pk}/roster").json()
    assert any(r["id"] == shift.pk and r["conflicts"] == [] for r in roster["items"])
    assigned = post(client, f"{BASE}/{wo.pk}/assign", {"shift_assignment_id": shift.pk})
    assert assigned.status_code == 200, assigned.json()
    assert assigned.json()["assignment"]["technician"] == "Marta Silva" and assigned.json()["conflicts"] == []
    assert post(client, f"{BASE}/{wo.pk}/start", {"note": "LOTO done"}).json()["status"] == "in_progress"
    held = post(client, f"{BASE}/{wo.pk}/hold", {"reason": "waiting_parts"})
    assert (held.json()["status"], held.json()["hold_reason"]) == ("on_hold", "waiting_parts")
    post(client, f"{BASE}/{wo.pk}/start")
    done = post(client, f"{BASE}/{wo.pk}/complete", report())
    assert done.status_code == 200, done.json()
    body = done.json()
    assert body["status"] == "completed" and body["completion_report"]["rca_verdict"] == "confirmed"
    assert body["rca_accuracy"] == {"confirmed": 1, "corrected": 0, "total": 1, "accuracy": 1.0}
    again = post(client, f"{BASE}/{wo.pk}/complete", report())
    assert again.status_code == 409 and again.json()["code"] == "illegal_transition"


def test_codes_and_accuracy_are_readable_by_approvers_who_cannot_act(client, approver, cell):
    wo = analysed_order(cell)
    client.force_login(approver)
    codes = client.get(f"{BASE}/execution/failure-codes", {"cell_id": cell.pk}).json()
    assert [c["code"] for c in codes["classes"]] == ["PUMP"]
    assert "PUMP.bearing_wear" in [p["code"] for p in codes["classes"][0]["problems"]]
    assert {"OM-LUBRICATION", "MISC-UNKNOWN"} <= {c["code"] for c in codes["causes"]}
    assert client.get(f"{BASE}/execution/rca-accuracy").json()["total"] == 0
    assert client.get(f"{BASE}/{wo.pk}/execution").status_code == 200
    for path, body in (("start", {}), ("hold", {"reason": "waiting_parts"}), ("cancel", {"reason": "x"})):
        refused = post(client, f"{BASE}/{wo.pk}/{path}", body)
        assert refused.status_code == 403 and refused.json()["code"] == "missing_scope"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (report(labour_hours=-1), "labour_hours"),
        (report(labour_hours=5000), "labour_hours"),
        (report(labour_hours=True), "labour_hours"),
        (report(labour_hours="2"), "labour_hours"),
        (report(labour_hours=None), "labour_hours"),
        (report(labour_hours=[2]), "labour_hours"),
        (report(parts_used=[{"ref": "SKF-6310-2Z-C3", "qty": True}]), "parts_used.0.qty"),
        (report(parts_used=[{"ref": "SKF-6310-2Z-C3", "qty": "1"}]), "parts_used.0.qty"),
        (report(rca_verdict="maybe"), "rca_verdict"),
        (report(problem_code="x" * 41), "problem_code"),
        (report(parts_used=[{"ref": "SKF-6310-2Z-C3", "qty": 0}]), "parts_used.0.qty"),
        (report(parts_used=[{"ref": "SKF-6310-2Z-C3", "qty": 99}]), "parts_used.0.qty"),
        (report(parts_used=[{"ref": "SKF-6310-2Z-C3", "qty": 1}] * 31), "parts_used"),
        (report(problem_code="PUMP.unknown"), "problem_code"),
        ({**report(), "work_done": ""}, "work_done"),
    ],
)
def test_bad_completion_input_is_422_naming_the_field(client, operator, cell, body, field):
    wo = analysed_order(cell)
    client.force_login(operator)
    post(client, f"{BASE}/{wo.pk}/start")
    response = post(client, f"{BASE}/{wo.pk}/complete", body)
    assert response.status_code == 422, response.json()
    assert response.json()["field"] == field
    assert not CompletionReport.objects.filter(work_order=wo).exists()
    wo.refresh_from_db()
    assert wo.status == "in_progress"


def test_whole_hours_are_accepted_as_labour(client, operator, cell):
    wo = analysed_order(cell)
    client.force_login(operator)
    post(client, f"{BASE}/{wo.pk}/start")
    done = post(client, f"{BASE}/{wo.pk}/complete", report(labour_hours=2))
    assert done.status_code == 200, done.json()
    assert CompletionReport.objects.get(work_order=wo).labour_hours == 2


def test_bad_assign_and_hold_input(client, operator, cell):
    wo = analysed_order(cell)
    client.force_login(operator)
    assert post(client, f"{BASE}/{wo.pk}/assign", {"shift_assignment_id": 999999}).json()["field"] == (
        "shift_assignment_id"
    )
    assert post(client, f"{BASE}/{wo.pk}/assign", {"shift_assignment_id": "1"}).status_code == 422
    post(client, f"{BASE}/{wo.pk}/start")
    assert post(client, f"{BASE}/{wo.pk}/hold", {"reason": "nap"}).json()["field"] == "reason"
    assert post(client, f"{BASE}/999999/start").status_code == 404
