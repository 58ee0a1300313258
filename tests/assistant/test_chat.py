import pytest

from assistant.models import Message, Run
from assistant.services.chat import chat_turn
from core.models import AgentRun, Event


@pytest.mark.django_db
def test_why_did_p02_trip_resolves_the_cell_charts_and_answers_from_the_recent_rca(operator, plant):
    frames = []
    outcome = chat_turn(user=operator, content="Why did P-02 trip?", on_frame=frames.append)

    calls = [f["name"] for f in frames if f["type"] == "tool_call"]
    # find_cells knows no P-02 here (the stand-in plant is not in the DB): its work orders name it
    assert calls[:2] == ["find_cells", "get_work_orders"]
    assert "render_signal_chart" in calls and "get_failure_history" in calls and "ask_investigator" in calls
    renders = [f for f in frames if f["type"] == "ui_render"]
    assert renders and renders[0]["component"] == "signal_chart" and renders[0]["props"]["cell_id"] == 2
    handoffs = [f for f in frames if f["type"] == "agent_handoff"]
    assert handoffs == [
        {"type": "agent_handoff", "from": "operator_qa", "to": "investigator", "reason": "Why did P-02 trip?"}
    ]
    assert "Bearing wear" in outcome.response and "work_order #7" in outcome.response
    assert plant.investigations == []  # answered from the recent RCA
    # tool_result frames carry a short summary, never the raw output
    assert all(set(f) == {"type", "name", "summary"} for f in frames if f["type"] == "tool_result")
    # persisted: user + assistant message, run linked to the core AgentRun
    assert list(Message.objects.filter(session=outcome.session).values_list("role", flat=True)) == ["user", "assistant"]
    run = Run.objects.get(pk=outcome.run.pk)
    assert run.status == "completed" and run.agent_run_id == AgentRun.objects.get(agent="operator_qa").pk
    # ui_render and agent_handoff also went on the bus with the bus field names
    bus = {e.type: e.payload for e in Event.objects.filter(type__in=["ui_render", "agent_handoff"])}
    assert bus["agent_handoff"]["from_agent"] == "operator_qa" and bus["agent_handoff"]["to_agent"] == "investigator"
    assert bus["ui_render"]["component"] == "signal_chart"


@pytest.mark.django_db
def test_no_matching_rca_starts_an_investigation(operator, plant):
    plant.work_orders[0].update(status="detected", rca_summary="")
    outcome = chat_turn(user=operator, content="Why did P-02 trip?")
    assert plant.investigations == [7]
    assert "started an investigation of work_order #7" in outcome.response


@pytest.mark.django_db
def test_an_investigation_that_finishes_in_time_answers_with_its_rca(operator, plant, settings):
    settings.ARIA_ASSISTANT = {"investigator_wait_seconds": 5}
    plant.work_orders[0].update(status="detected", rca_summary="")
    plant.rca_ready = True
    outcome = chat_turn(user=operator, content="Why did P-02 trip?")
    assert "Cavitation: suction strainer blocked." in outcome.response and "work_order #7" in outcome.response


@pytest.mark.django_db
def test_follow_up_in_same_session_keeps_history(operator, plant):
    first = chat_turn(user=operator, content="What is the vibration of P-02?")
    second = chat_turn(user=operator, content="And C-01?", session_id=first.session.pk)
    assert second.session.pk == first.session.pk
    assert first.session.messages.count() == 4


@pytest.mark.django_db
def test_rest_fallback(client, operator, plant):
    client.force_login(operator)
    response = client.post(
        "/api/v1/agent/chat",
        {"messages": [{"role": "user", "content": "Why did P-02 trip?"}]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert "Bearing wear" in body["response"]
    names = [c["name"] for c in body["tool_calls"]]
    assert "ask_investigator" in names
    assert all(set(c) == {"name", "args", "result_summary"} for c in body["tool_calls"])


@pytest.mark.django_db
def test_rest_fallback_needs_operator(client, make_user):
    client.force_login(make_user("nobody"))
    response = client.post(
        "/api/v1/agent/chat", {"messages": [{"role": "user", "content": "hi"}]}, content_type="application/json"
    )
    assert response.status_code == 403
