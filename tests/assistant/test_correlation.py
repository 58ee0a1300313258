"""Every AgentRun a session causes records the session's correlation id — the chat agent and the
agents it hands off to, the coordinator, the planner — and the turn's message lists those runs
(with their engine, so the drawer can say an offline demo engine answered)."""

import pytest

pytest.importorskip("workorders.capabilities")
pytest.importorskip("orchestrator.capabilities")

from assistant.services.chat import chat_turn
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from core.models import AgentRun
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def p02():
    cell = f.make_cell("P-02")
    f.ramp(f.make_signal(cell), peak=7.4)
    f.make_kb(cell)
    f.make_history(cell)
    return cell


def test_a_chat_turn_and_its_handoffs_carry_the_session_correlation_id(operator, p02):
    f.make_work_order(p02, status="analyzed", rca_summary="DE bearing wear: vibration 2 → 7.4 mm/s.")
    session = session_create(owner=operator, mode="chat", kind="qa")
    chat_turn(user=operator, content="Why did P-02 trip?", session_id=session.pk)
    runs = AgentRun.objects.filter(correlation_id=session.correlation_id)
    assert {r.agent for r in runs} >= {"operator_qa"}
    assert not AgentRun.objects.exclude(correlation_id=session.correlation_id).filter(user=operator).exists()
    message = session.messages.filter(role="assistant").last()
    assert {r["id"] for r in message.metadata["agent_runs"]} == {r.pk for r in runs}
    assert message.metadata["offline"] is True and message.metadata["engines"] == ["fake"]


def test_coordinator_and_plan_turns_record_it_too(operator, p02):
    f.make_work_order(p02, status="detected", priority="high", title="High vibration on P-02")
    session = session_create(owner=operator, mode="coordinate")
    outcome = session_turn(session=session, user=operator, content="What is going on with P-02?")
    assert outcome.message.metadata["agent_runs"], outcome.message.metadata
    assert all(
        AgentRun.objects.get(pk=r["id"]).correlation_id == session.correlation_id
        for r in outcome.message.metadata["agent_runs"]
    )
    other = session_create(owner=operator, mode="plan")
    session_turn(session=other, user=operator, content="Investigate the open alarms on P-02")
    assert not AgentRun.objects.filter(correlation_id="").exclude(user=None).filter(user=operator).exists()


def test_work_a_session_queues_through_the_worker_runs_under_its_correlation_id(
    operator, p02, django_capture_on_commit_callbacks
):
    """The chat asks for an investigation (the start_investigation tool): the Investigator runs in
    the worker, later, and its run is still found under the session's id (the dispatch intent
    keeps it; the message carries it as a header; the task runs in that scope)."""
    from core.agents.correlation import correlation_scope, current_correlation_id
    from core.capabilities import CapabilityContext, dispatch
    from core.models import DispatchIntent

    wo = f.make_work_order(p02, status="detected", title="High vibration on P-02")
    session = session_create(owner=operator, mode="chat", kind="qa")
    with django_capture_on_commit_callbacks(execute=True), correlation_scope(session.correlation_id):
        result = dispatch("workorders.start_investigation", {"work_order_id": wo.pk}, ctx=CapabilityContext(operator))
    assert not result.is_error, result.message

    assert DispatchIntent.objects.get(task_name="workorders.investigate").correlation_id == session.correlation_id
    investigator = AgentRun.objects.get(agent="investigator", subject_id=str(wo.pk))
    assert investigator.correlation_id == session.correlation_id
    assert current_correlation_id.get() == ""  # the task's scope ended with it

    # Work queued outside any session carries none, even in the same worker thread afterwards.
    other = f.make_work_order(p02, status="detected", title="Second order")
    with django_capture_on_commit_callbacks(execute=True):
        dispatch("workorders.start_investigation", {"work_order_id": other.pk}, ctx=CapabilityContext(operator))
    assert AgentRun.objects.get(agent="investigator", subject_id=str(other.pk)).correlation_id == ""
