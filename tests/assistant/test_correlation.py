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
