"""Broad goals fan out into per-object steps (issue 11 item 2), through the plan API as a user types them.

Plant rows are seeded with the sentinel/workorders factories (test setup only); the planner reaches
them through the read capabilities as the plan owner.
"""

import pytest

from sentinel.models import Cell, Line, Site
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "Investigate all open alarms on line 1 and prepare work orders"


def create(client, user, goal, **extra):
    client.force_login(user)
    return client.post(f"{API}/plans", {"goal": goal, **extra}, content_type="application/json")


def alarm_order(cell, key="vibration_mm_s", *, status="detected", state=None):
    alarm = f.make_alarm(f.make_signal(cell, key))
    if state:
        alarm.state = state
        alarm.save(update_fields=["state"])
    return alarm, f.make_work_order(cell, status=status, triggered_by_alarm=alarm, title=f"{cell.tag} {key}")


@pytest.fixture
def plant(db):
    p01, p02 = f.make_cell("P-01"), f.make_cell("P-02")  # both on "Line 1"
    line2 = Line.objects.create(site=Site.objects.get(name="Test Plant"), name="Line 2 — Packaging")
    c05 = Cell.objects.create(line=line2, tag="C-05", name="Conveyor C-05", equipment_type="conveyor")
    return {"P-01": p01, "P-02": p02, "C-05": c05}


def test_open_alarms_on_line_1_fan_out_into_investigate_then_repair_per_alarm(client, operator, plant):
    _, wo1 = alarm_order(plant["P-01"])
    _, wo2 = alarm_order(plant["P-02"], "bearing_temp_c")
    alarm_order(plant["C-05"])  # line 2: not in the goal
    alarm_order(plant["P-02"], "flow_m3h", state="cleared")  # not open
    response = create(client, operator, GOAL)
    assert response.status_code == 201, response.content
    body = response.json()
    steps = [(s["order"], s["capability"], s["inputs"]["work_order_id"], s["depends_on"]) for s in body["steps"]]
    assert steps == [
        (1, "workorders.start_investigation", wo1.pk, []),
        (2, "workorders.generate_repair_order", wo1.pk, [1]),
        (3, "workorders.start_investigation", wo2.pk, []),
        (4, "workorders.generate_repair_order", wo2.pk, [3]),
    ]
    reasons = [n["reason"] for n in body["planner_notes"]]
    assert "line 1 is Line 1: P-01, P-02" in reasons
    assert any(r.startswith("alarm ") and f"→ WO-{wo1.pk}: investigate then repair order" in r for r in reasons)


def test_the_model_planner_path_fans_out_the_same(client, operator, plant):
    _, wo1 = alarm_order(plant["P-01"])
    _, wo2 = alarm_order(plant["P-02"])
    response = create(client, operator, GOAL, planner="model")
    assert response.status_code == 201, response.content
    body = response.json()
    assert [(s["capability"], s["inputs"]["work_order_id"], s["depends_on"]) for s in body["steps"]] == [
        ("workorders.start_investigation", wo1.pk, []),
        ("workorders.generate_repair_order", wo1.pk, [1]),
        ("workorders.start_investigation", wo2.pk, []),
        ("workorders.generate_repair_order", wo2.pk, [3]),
    ]
    assert "line 1 is Line 1: P-01, P-02" in [n["reason"] for n in body["planner_notes"]]


def test_every_detected_work_order_on_a_cell(client, operator, plant):
    first = f.make_work_order(plant["P-02"], status="detected")
    second = f.make_work_order(plant["P-02"], status="detected")
    f.make_work_order(plant["P-02"], status="open")  # not detected
    f.make_work_order(plant["P-01"], status="detected")  # another cell
    response = create(client, operator, "Investigate every detected work order on cell P-02")
    body = response.json()
    assert response.status_code == 201, response.content
    assert [(s["capability"], s["inputs"]["work_order_id"]) for s in body["steps"]] == [
        ("workorders.start_investigation", second.pk),  # newest first, as get_work_orders lists them
        ("workorders.start_investigation", first.pk),
    ]


def test_step_cap_keeps_whole_objects_and_notes_what_was_left_out(client, operator, plant):
    orders = [alarm_order(plant["P-01"], f"signal_{i}")[1] for i in range(3)]
    response = create(client, operator, GOAL, constraints={"max_steps": 4})
    body = response.json()
    assert response.status_code == 201, response.content
    assert len(body["steps"]) == 4  # two alarms × (investigate, repair); the third is left out whole
    planned = {s["inputs"]["work_order_id"] for s in body["steps"]}
    assert len(planned) == 2
    (capped,) = [n for n in body["planner_notes"] if n["action"] == "capped"]
    left = ({o.pk for o in orders} - planned).pop()
    assert "step cap 4 reached: planned 2 of 3" in capped["reason"] and f"WO-{left}" in capped["reason"]


def test_unresolved_parts_of_the_goal_are_notes(client, operator, plant):
    alarm = f.make_alarm(f.make_signal(plant["P-01"]))  # an open alarm without a work order
    response = create(client, operator, "Investigate all open alarms on line 7 and line 1 and prepare work orders")
    body = response.json()
    assert response.status_code == 201, response.content
    reasons = [n["reason"] for n in body["planner_notes"]]
    assert any(r.startswith("no production line matches 'line 7'") for r in reasons)
    assert any(f"alarm {alarm.pk} on P-01" in r and "has no work order yet" in r for r in reasons)
    assert "no open alarm with a work order on Line 1" in reasons
    # nothing to fan out over: the plan reads the line's alarms instead of guessing
    assert [(s["capability"], s["inputs"]["cell_id"]) for s in body["steps"]] == [
        ("workorders.get_signal_anomalies", plant["P-01"].pk),
        ("workorders.get_signal_anomalies", plant["P-02"].pk),
    ]


def test_structured_guidance_narrows_the_set_and_is_shown(client, operator, plant):
    alarm_order(plant["P-01"])
    _, wo2 = alarm_order(plant["P-02"])
    response = create(client, operator, GOAL, constraints={"cells": ["P-02"]})
    body = response.json()
    assert response.status_code == 201, response.content
    assert {s["inputs"]["work_order_id"] for s in body["steps"]} == {wo2.pk}
    assert body["constraints"] == {"cells": ["P-02"]}
    assert any(n["action"] == "constrained" and "left out P-01" in n["reason"] for n in body["planner_notes"])
    # guidance alone (no line in the goal) picks the cells: lines by name
    _, wo5 = alarm_order(plant["C-05"])
    response = create(client, operator, "Investigate all open alarms", constraints={"lines": ["Line 2 — Packaging"]})
    assert {s["inputs"]["work_order_id"] for s in response.json()["steps"]} == {wo5.pk}


def test_a_line_for_a_plain_read_goal_reads_each_cell(client, operator, plant):
    response = create(client, operator, "Show the vibration readings on line 1")
    body = response.json()
    assert response.status_code == 201, response.content
    assert [(s["capability"], s["inputs"]["cell_id"]) for s in body["steps"]] == [
        ("workorders.get_current_signals", plant["P-01"].pk),
        ("workorders.get_current_signals", plant["P-02"].pk),
    ]


def test_a_clause_no_step_covers_is_a_note(client, operator, plant):
    alarm_order(plant["P-01"])
    goal = "Investigate all open alarms on line 1, prepare work orders and notify the shift lead"
    body = create(client, operator, goal).json()
    assert "not planned: “notify the shift lead” — no step of this plan does that" in [
        n["reason"] for n in body["planner_notes"]
    ]


def test_the_model_is_held_to_the_scope_and_the_cap(operator, plant):
    """A model that proposes a step on a work order outside the set, and too many steps."""
    from core.agents.engines.fake import FakeEngine, FakeReply
    from orchestrator.planning.model import ModelPlanner

    _, wo1 = alarm_order(plant["P-01"])
    _, outside = alarm_order(plant["C-05"])
    steps = [
        {"capability": "workorders.start_investigation", "inputs": {"work_order_id": wo1.pk}},
        {"capability": "workorders.generate_repair_order", "inputs": {"work_order_id": wo1.pk}, "depends_on": [0]},
        {"capability": "workorders.start_investigation", "inputs": {"work_order_id": outside.pk}},
        {"capability": "workorders.get_work_order", "inputs": {"work_order_id": wo1.pk}, "depends_on": [1]},
    ]
    engine = FakeEngine(script=[FakeReply(tool_calls=[("submit_plan", {"steps": steps, "notes": ["no SMS tool"]})])])
    proposal = ModelPlanner(engine=engine).propose(
        goal=GOAL, context_refs=[], constraints={"max_steps": 2}, user=operator
    )
    assert [(s["capability"], s["inputs"]["work_order_id"], s["depends_on"]) for s in proposal.steps] == [
        ("workorders.start_investigation", wo1.pk, []),
        ("workorders.generate_repair_order", wo1.pk, [0]),
    ]
    reasons = {n["action"]: n["reason"] for n in proposal.notes}
    assert reasons["dropped"] == f"work order {outside.pk} is outside the goal's scope"
    assert reasons["capped"] == "step cap 2: dropped 1 proposed step(s)"
    assert reasons["unresolved"] == "no SMS tool"


@pytest.mark.usefixtures("steady_registry")
def test_planning_reads_do_not_grow_with_the_number_of_alarms(client, operator, plant):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(n_alarms):
        for i in range(n_alarms):
            alarm_order(plant["P-01"], f"extra_{n_alarms}_{i}")
        client.force_login(operator)
        with CaptureQueriesContext(connection) as captured:
            assert create(client, operator, GOAL).status_code == 201
        return len(captured)

    queries(0)  # first request of the test: session and caches warm up
    assert queries(1) == queries(6)


def test_executed_the_per_alarm_steps_carry_the_root_cause_and_repair_order(client, operator, plant):
    """The plan runs as the workers would: investigations and repair orders by the offline engine."""
    from orchestrator.models import Plan
    from orchestrator.services.executor import plan_execute
    from orchestrator.services.jobs import plan_poll
    from workorders.services.investigation import work_order_generate, work_order_investigate

    _, wo1 = alarm_order(plant["P-01"])
    body = create(client, operator, GOAL).json()
    client.post(f"{API}/plans/{body['id']}/approve")
    client.post(f"{API}/plans/{body['id']}/execute")
    plan_execute(body["id"])
    work_order_investigate(work_order_id=wo1.pk)
    work_order_generate(work_order_id=wo1.pk)
    for _ in range(2):
        plan_poll(body["id"])
        plan_execute(body["id"])
    assert Plan.objects.get(pk=body["id"]).status == "completed"
    steps = client.get(f"{API}/plans/{body['id']}").json()["steps"]
    investigated, repaired = steps[0]["result"], steps[1]["result"]
    assert investigated["work_order_id"] == wo1.pk and investigated["rca_summary"]
    assert isinstance(investigated["confidence"], float)
    assert repaired["status"] == "open" and repaired["recommended_actions"]


def test_the_repair_order_job_waits_for_the_generator_and_fails_plainly(operator, plant):
    from core.capabilities import CapabilityContext, JobHandle, dispatch, job_status

    wo = f.make_work_order(plant["P-01"], status="detected")
    result = dispatch(
        "workorders.generate_repair_order", {"work_order_id": wo.pk}, ctx=CapabilityContext(user=operator)
    )
    assert not result.is_error and result.job == JobHandle("repair_order", str(wo.pk))
    assert job_status(result.job)[0] == "pending"  # not investigated yet
    wo.status, wo.rca_details = "analyzed", {"fallback": True}
    wo.save(update_fields=["status", "rca_details"])
    state, details = job_status(result.job)
    assert state == "failed" and "no root cause" in details["error"]
    wo.status = "cancelled"
    wo.save(update_fields=["status"])
    assert job_status(result.job) == (
        "failed",
        {**details, "status": "cancelled", "error": "the work order was cancelled"},
    )
    missing = dispatch(
        "workorders.generate_repair_order", {"work_order_id": 99999}, ctx=CapabilityContext(user=operator)
    )
    assert missing.is_error


def test_a_tag_beyond_the_first_listed_page_of_cells_still_resolves(client, operator, plant):
    line = plant["P-01"].line
    Cell.objects.bulk_create(Cell(line=line, tag=f"A-{i:03d}", name=f"Fan {i}") for i in range(100))
    zed = Cell.objects.create(line=line, tag="Z-01", name="Zed pump")
    body = create(client, operator, "Show the vibration readings of Z-01").json()
    assert [(s["capability"], s["inputs"]) for s in body["steps"]] == [
        ("workorders.get_current_signals", {"cell_id": zed.pk})
    ]
    assert any(n["action"] == "capped" and "more than 100 cells" in n["reason"] for n in body["planner_notes"])


@pytest.mark.parametrize(
    ("constraints", "field"),
    [
        ({"cells": "P-02"}, "constraints.cells"),
        ({"lines": [1]}, "constraints.lines"),
        ({"max_steps": 0}, "constraints.max_steps"),
        ({"max_steps": True}, "constraints.max_steps"),
        ({"resolved": ["P-2"]}, "constraints.resolved"),
    ],
)
def test_malformed_guidance_is_a_422_naming_the_field_and_nothing_is_written(
    client, operator, plant, constraints, field
):
    from orchestrator.models import Plan

    response = create(client, operator, GOAL, constraints=constraints)
    assert response.status_code == 422 and response.json()["field"] == field
    response = create(client, operator, GOAL, constraints=constraints, planner="model")
    assert response.status_code == 422 and response.json()["field"] == field
    assert not Plan.objects.exists()


def test_a_plain_goal_notes_its_unplanned_clause_too_and_the_usual_goals_none(client, operator, plant):
    body = create(client, operator, "Check the temperature of P-02 and call the pump vendor").json()
    reasons = [n["reason"] for n in body["planner_notes"]]
    assert "not planned: “call the pump vendor” — no step of this plan does that" in reasons
    for goal in (
        "What is on the backlog?",
        "Investigate the vibration on P-02",
        "Raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer",
    ):
        notes = create(client, operator, goal).json()["planner_notes"]
        assert not [n for n in notes if n["reason"].startswith("not planned")], goal
