"""Per-session skill choices: a session pins a skill (always included, whatever the turn says) or
disables one (never used, even a globally pinned one), through the API the drawer uses; the turn's
skill selection and the prompt the model gets honour it. Refused: another owner's session, an
unknown skill or state, pinning a skill an approver disabled for everyone."""

import pytest

from assistant.models import Run, Skill
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from core.agents.engines.fake import FakeEngine, FakeReply

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


@pytest.fixture
def skills():
    return {
        "units": Skill.objects.create(name="units", instructions="Always give SI units.", triggers=["units"]),
        "house": Skill.objects.create(name="house", instructions="House style: short.", runtime_mode="pinned"),
        "banned": Skill.objects.create(name="banned", instructions="Old rule.", runtime_mode="disabled"),
    }


def put(client, session, name, state):
    return client.put(f"{API}/sessions/{session.pk}/skills/{name}", {"state": state}, content_type="application/json")


def turn(session, user, text="hello"):
    prompts = []

    def record(state):
        prompts.append(state.request.system)
        return FakeReply(tool_calls=[("submit_turn", {"reply": "ok"})])

    session_turn(session=session, user=user, content=text, engine=FakeEngine({"authoring_assistant": record}))
    return Run.objects.filter(session=session).latest("id"), prompts[0]


def test_pinned_and_disabled_in_a_session_change_what_the_turn_uses(client, operator, skills):
    session = session_create(owner=operator, mode="chat")
    run, prompt = turn(session, operator)
    assert [s["name"] for s in run.selected_skills] == ["house"]  # "units" not triggered

    client.force_login(operator)
    assert put(client, session, "units", "pinned").status_code == 200
    listed = put(client, session, "house", "disabled").json()
    assert {s["name"]: s["session_state"] for s in listed} == {"banned": "auto", "house": "disabled", "units": "pinned"}
    session.refresh_from_db()
    run, prompt = turn(session, operator)
    assert [s["name"] for s in run.selected_skills] == ["units"]
    assert run.selected_skills[0]["mode"] == "pinned"
    assert "Always give SI units." in prompt and "House style" not in prompt

    assert put(client, session, "units", "auto").status_code == 200
    session.refresh_from_db()
    run, _ = turn(session, operator)
    assert run.selected_skills == []  # house still disabled here, units back to its triggers
    other = session_create(owner=operator, mode="chat")
    assert [s["name"] for s in turn(other, operator)[0].selected_skills] == ["house"]  # only that session


def test_refusals(client, operator, make_user, skills):
    session = session_create(owner=operator, mode="chat")
    client.force_login(make_user("mallory", "operator"))
    assert put(client, session, "units", "pinned").status_code == 404
    assert client.get(f"{API}/sessions/{session.pk}/skills").status_code == 404
    client.force_login(operator)
    assert put(client, session, "nope", "pinned").status_code == 404
    bad = put(client, session, "units", "always")
    assert bad.status_code == 422 and "state" in str(bad.json())
    refused = put(client, session, "banned", "pinned")
    assert refused.status_code == 409 and "disabled for everyone" in refused.json()["detail"]
    session.refresh_from_db()
    assert session.skill_prefs == {"pinned": [], "disabled": []}
