"""Build mode's mutating tools follow the session's tool_approval setting: by default (ask) a call
the model makes is held for the user's Confirm (tests/assistant/test_tool_confirm.py) and does not
run by itself; a session set to allow runs them."""

import pytest
from pydantic import BaseModel

from assistant.agents.author import author_tools
from assistant.conf import AssistantConfig
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from core.access import OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.capabilities import capability, registry
from core.models import AgentStep

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
CALLS: list[dict] = []


class NoteIn(BaseModel):
    work_order_id: int
    note: str


@pytest.fixture(autouse=True)
def mutating_tool():
    @capability(
        "testkit.update_order_note",
        description="Change a work order's note.",
        input=NoteIn,
        tier="mutate",
        scopes=(OPERATOR,),
    )
    def update_order_note(ctx, params):
        CALLS.append(params.model_dump())
        return {"summary": "updated"}

    CALLS.clear()
    yield
    registry.unregister("testkit.update_order_note")


def engine_that_mutates() -> FakeEngine:
    return FakeEngine(
        script=[
            FakeReply(tool_calls=[("update_order_note", {"work_order_id": 7, "note": "closed by the model"})]),
            FakeReply(tool_calls=[("submit_turn", {"reply": "done"})]),
        ]
    )


def test_mutating_tools_are_projected_in_build_mode_only_when_the_session_allows():
    config = AssistantConfig()
    assert "testkit.update_order_note" not in author_tools("build", config)
    assert "testkit.update_order_note" in author_tools("build", config, allow_mutations=True)
    assert "testkit.update_order_note" not in author_tools("chat", config, allow_mutations=True)


def test_by_default_a_mutating_call_in_build_mode_does_not_run(operator):
    session = session_create(owner=operator, mode="build")
    assert session.tool_approval == "ask"
    outcome = session_turn(session=session, user=operator, content="close order 7", engine=engine_that_mutates())
    assert CALLS == []
    step = AgentStep.objects.get(tool="update_order_note")
    assert step.kind == "held" and "awaiting confirmation" in step.result_summary
    assert [c["status"] for c in outcome.pending_calls] == ["pending"]


def test_a_session_set_to_allow_runs_it_and_the_setting_is_validated(client, operator, make_user):
    session = session_create(owner=operator, mode="build")
    client.force_login(operator)
    url = f"{API}/sessions/{session.pk}"
    bad = client.patch(url, {"tool_approval": "always"}, content_type="application/json")
    assert bad.status_code == 422 and "tool_approval" in str(bad.json())
    other = make_user("mallory", "operator")
    client.force_login(other)
    assert client.patch(url, {"tool_approval": "allow"}, content_type="application/json").status_code == 404
    client.force_login(operator)
    response = client.patch(url, {"tool_approval": "allow"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["tool_approval"] == "allow"
    session.refresh_from_db()
    session_turn(session=session, user=operator, content="close order 7", engine=engine_that_mutates())
    assert CALLS == [{"work_order_id": 7, "note": "closed by the model"}]
