"""A plan's steps name their cell by its tag, as people know it, with one read for all of them.

The walkthrough's defect: the Plans page titled a step "Alarms of cell 2" (the row id in its inputs)
while its result said "0 alarm(s) on C-01". Now every plan the API returns carries each step's
`cell_tag` (static/orchestrator/plan_views.js titles it "Alarms of C-01"), read with one find_cells
listing per response — the number of queries does not grow with the number of steps or plans.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.orchestrator.conftest import build_plan
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
ALARMS = "workorders.get_signal_anomalies"


def _plan_over(owner, cells):
    return build_plan(owner, [{"capability": ALARMS, "inputs": {"cell_id": c.pk}} for c in cells], status="draft")


def _queries(client, path: str) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200, response.content
    return len(captured), response.json()


def test_a_planned_step_names_its_cell_by_tag_through_the_api(client, operator):
    f.make_cell("P-01")
    cell = f.make_cell("C-01")
    client.force_login(operator)
    created = client.post(f"{API}/plans", {"goal": "Check the alarms on C-01"}, content_type="application/json")
    assert created.status_code == 201, created.content
    steps = [s for s in created.json()["steps"] if s["inputs"].get("cell_id") == cell.pk]
    assert steps and {s["cell_tag"] for s in steps} == {"C-01"}
    assert all(s["cell_tag"] is None for s in created.json()["steps"] if "cell_id" not in s["inputs"])


def test_a_plans_steps_are_tagged_with_a_query_count_that_does_not_grow(client, operator):
    cells = [f.make_cell(f"C-{n:02d}") for n in range(1, 7)]
    small, large = _plan_over(operator, cells[:2]), _plan_over(operator, cells)
    client.force_login(operator)
    client.get(f"{API}/plans/{small.pk}")  # the session and the registry are warm for both

    few, body = _queries(client, f"{API}/plans/{small.pk}")
    many, big = _queries(client, f"{API}/plans/{large.pk}")

    assert [s["cell_tag"] for s in body["steps"]] == ["C-01", "C-02"]
    assert [s["cell_tag"] for s in big["steps"]] == [f"C-{n:02d}" for n in range(1, 7)]
    assert many == few


def test_the_plan_list_reads_the_cells_once_for_every_plan(client, operator):
    cells = [f.make_cell(f"C-{n:02d}") for n in range(1, 5)]
    _plan_over(operator, cells[:1])
    client.force_login(operator)
    client.get(f"{API}/plans")
    one, _ = _queries(client, f"{API}/plans")
    _plan_over(operator, cells[1:])
    _plan_over(operator, cells)
    three, listed = _queries(client, f"{API}/plans")
    assert [[s["cell_tag"] for s in p["steps"]] for p in listed] == [
        ["C-01", "C-02", "C-03", "C-04"],
        ["C-02", "C-03", "C-04"],
        ["C-01"],
    ]
    assert three == one


def test_a_plan_without_cell_steps_reads_no_cells(client, operator):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    client.force_login(operator)
    client.get(f"{API}/plans/{plan.pk}")
    with CaptureQueriesContext(connection) as captured:
        body = client.get(f"{API}/plans/{plan.pk}").json()
    assert body["steps"][0]["cell_tag"] is None
    assert not any("sentinel_cell" in q["sql"] for q in captured.captured_queries)


def test_a_step_on_a_cell_beyond_the_first_hundred_is_named_by_its_tag(client, operator):
    # cell_tags read the first 100 cells of the plant's listing (in tag order) and showed the id of any
    # other; on a plant of 120 cells, "Z-120" was titled by its id.
    cells = [f.make_cell(f"Z-{n:03d}") for n in range(1, 121)]
    plan = _plan_over(operator, [cells[0], cells[-1]])
    client.force_login(operator)
    _, body = _queries(client, f"{API}/plans/{plan.pk}")
    assert [s["cell_tag"] for s in body["steps"]] == ["Z-001", "Z-120"]
