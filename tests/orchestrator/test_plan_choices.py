"""`choice` interactions end to end: the planner asks which equipment was meant, the owner answers
through the answer route, and the draft is planned again with the pick (issue 11 item 2)."""

import pytest

from core.access import APPROVER, OPERATOR
from core.models import AuditRecord
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"


def create(client, user, goal, **extra):
    client.force_login(user)
    return client.post(f"{API}/plans", {"goal": goal, **extra}, content_type="application/json")


def answer(client, user, interaction_id, **body):
    client.force_login(user)
    return client.post(f"{API}/interactions/{interaction_id}/answer", body, content_type="application/json")


@pytest.fixture
def pumps(db):
    return f.make_cell("P-01"), f.make_cell("P-02")


def test_an_ambiguous_pump_asks_which_one_and_the_answer_replans_the_draft(client, operator, pumps):
    _, p02 = pumps
    body = create(client, operator, "Show the vibration of the pump").json()
    (ask,) = body["interactions"]
    assert ask["kind"] == "choice" and ask["status"] == "open" and ask["step_id"] is None
    assert ask["question"] == "Several cells are a pump. Which one did you mean?"
    assert ask["options"] == ["P-01", "P-02"]
    assert [s["capability"] for s in body["steps"]] == ["workorders.find_cells"]  # only looks until answered
    assert any("asked which one was meant" in n["reason"] for n in body["planner_notes"])
    # not approvable while the choice is open
    client.force_login(operator)
    refused = client.post(f"{API}/plans/{body['id']}/approve")
    assert refused.status_code == 409 and "waits for a choice" in refused.json()["detail"]

    done = answer(client, operator, ask["id"], choice="P-02")
    assert done.status_code == 200, done.content
    assert done.json()["answer"]["choice"] == "P-02"
    plan = client.get(f"{API}/plans/{body['id']}").json()
    assert [(s["capability"], s["inputs"]) for s in plan["steps"]] == [
        ("workorders.get_current_signals", {"cell_id": p02.pk})
    ]
    assert plan["constraints"] == {"resolved": {"the pump": "P-02"}}
    assert plan["planner_notes"][0] == {
        "action": "chosen",
        "capability": "",
        "reason": "the pump is P-02 (chosen by olga)",
    }
    assert AuditRecord.objects.filter(action="plan.replanned", target_id=str(body["id"])).exists()
    assert client.post(f"{API}/plans/{body['id']}/approve").status_code == 200
    again = answer(client, operator, ask["id"], choice="P-01")
    assert again.status_code == 409  # answered once


def test_a_mistyped_tag_offers_its_look_alike(client, operator, pumps):
    body = create(client, operator, "Investigate the vibration on P-2").json()
    (ask,) = body["interactions"]
    assert ask["options"] == ["P-02"]
    assert ask["evidence"]["candidates"][0]["tag"] == "P-02"
    assert answer(client, operator, ask["id"], choice="P-02").status_code == 200
    plan = client.get(f"{API}/plans/{body['id']}").json()
    assert plan["steps"][0]["inputs"] == {"cell_id": pumps[1].pk}


def test_the_answer_must_be_one_of_the_options(client, operator, pumps):
    body = create(client, operator, "Show the vibration of the pump").json()
    ask = body["interactions"][0]
    for bad in ({"choice": "P-09"}, {}, {"decision": "approve"}):
        response = answer(client, operator, ask["id"], **bad)
        assert response.status_code == 422, bad
        assert response.json()["field"] == "choice"
    wrong_inputs = answer(client, operator, ask["id"], choice="P-01", inputs={"cell_id": 1})
    assert wrong_inputs.status_code == 422 and wrong_inputs.json()["field"] == "inputs"
    plan = client.get(f"{API}/plans/{body['id']}").json()
    assert [s["capability"] for s in plan["steps"]] == ["workorders.find_cells"]  # nothing written
    assert plan["interactions"][0]["status"] == "open"


def test_hostile_another_user_or_an_approver_cannot_answer_the_owners_choice(client, operator, make_user, pumps):
    body = create(client, operator, "Show the vibration of the pump").json()
    ask = body["interactions"][0]
    other = make_user("mallory", OPERATOR)
    approver = make_user("ada", APPROVER, OPERATOR)
    assert answer(client, other, ask["id"], choice="P-01").status_code == 404
    assert answer(client, approver, ask["id"], choice="P-01").status_code == 404  # a choice is not an approval
    client.force_login(operator)
    assert client.get(f"{API}/plans/{body['id']}").json()["interactions"][0]["status"] == "open"


def test_a_cancelled_draft_takes_no_answer(client, operator, pumps):
    body = create(client, operator, "Show the vibration of the pump").json()
    client.force_login(operator)
    client.patch(f"{API}/plans/{body['id']}", {"status": "cancelled"}, content_type="application/json")
    assert answer(client, operator, body["interactions"][0]["id"], choice="P-01").status_code == 409


def test_the_model_planner_asks_the_same_and_plans_with_the_answer(client, operator, pumps):
    _, p02 = pumps
    body = create(client, operator, "Show the vibration of the pump", planner="model").json()
    (ask,) = body["interactions"]
    assert ask["kind"] == "choice" and ask["options"] == ["P-01", "P-02"]
    assert answer(client, operator, ask["id"], choice="P-02").status_code == 200
    plan = client.get(f"{API}/plans/{body['id']}").json()
    assert plan["planner"] == "model"
    assert [(s["capability"], s["inputs"]) for s in plan["steps"]] == [
        ("workorders.get_current_signals", {"cell_id": p02.pk})
    ]
