"""The heuristic planner resolves equipment tags in the goal (P-02) to cells via find_cells.

The Plans page's own placeholder goal, "Investigate the vibration on P-02", used to be refused
with 422 because `get_current_signals` had no `cell_id`. Cells and work orders are seeded with the
sentinel/workorders models here (test setup only); the planner reaches them through capabilities.
"""

import pytest

from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "Investigate the vibration on P-02"


def create(client, user, goal, **extra):
    client.force_login(user)
    return client.post(f"{API}/plans", {"goal": goal, **extra}, content_type="application/json")


def steps_of(body):
    return [(s["capability"], s["inputs"]) for s in body["steps"]]


def test_placeholder_goal_on_a_cell_without_an_active_order_plans_the_reads(client, operator):
    cell = f.make_cell("P-02")
    f.make_work_order(cell, status="completed")  # not active: nothing to investigate
    f.make_cell("P-021")  # a fragment match find_cells also returns; only the exact tag counts
    response = create(client, operator, GOAL)
    assert response.status_code == 201, response.content
    body = response.json()
    assert steps_of(body) == [
        ("workorders.get_current_signals", {"cell_id": cell.pk}),
        (
            "workorders.get_signal_trends",
            {"cell_id": cell.pk, "signal_def_ids": None, "minutes": 60, "hours": None, "since": None, "buckets": 12},
        ),
        ("workorders.get_failure_history", {"cell_id": cell.pk, "limit": 10, "confirmed_only": False}),
    ]
    assert all(s["tier"] == "read" for s in body["steps"])
    reasons = [n["reason"] for n in body["planner_notes"]]
    assert f"P-02 is cell {cell.pk}" in reasons
    assert "no detected work order on P-02; reading the cell" in reasons


def test_investigate_goal_on_a_cell_with_a_detected_order_investigates_it(client, operator):
    cell = f.make_cell("P-02")
    other = f.make_work_order(f.make_cell("C-01"), status="detected")  # another cell's order
    f.make_work_order(cell, status="completed")
    wo = f.make_work_order(cell, status="detected")
    response = create(client, operator, GOAL)
    assert response.status_code == 201, response.content
    body = response.json()
    assert steps_of(body) == [
        ("workorders.get_work_order", {"work_order_id": wo.pk}),
        ("workorders.start_investigation", {"work_order_id": wo.pk}),
        ("workorders.get_work_order", {"work_order_id": wo.pk}),
        ("workorders.get_current_signals", {"cell_id": cell.pk}),
    ]
    assert [s["depends_on"] for s in body["steps"]] == [[], [1], [2], []]
    assert other.pk not in [s["inputs"].get("work_order_id") for s in body["steps"]]


def test_other_tag_shapes_resolve_and_explicit_refs_win(client, operator):
    cv = f.make_cell("CV-03")
    response = create(client, operator, "Show the temperature readings of CV-03")
    assert response.status_code == 201, response.content
    assert steps_of(response.json()) == [("workorders.get_current_signals", {"cell_id": cv.pk})]
    pr = f.make_cell("PR-05")
    response = create(client, operator, "Show the temperature of CV-03", context_refs=[f"cell:{pr.pk}"])
    assert steps_of(response.json()) == [("workorders.get_current_signals", {"cell_id": pr.pk})]


def test_unknown_tag_is_noted_and_still_refused_when_nothing_is_valid(client, operator):
    response = create(client, operator, GOAL)  # no P-02 seeded
    assert response.status_code == 422
    notes = response.json()["notes"]
    assert {"action": "unresolved", "capability": "workorders.find_cells", "reason": "no cell is tagged P-02"} in notes
