"""The one "run an agent, fall back on failure" service (workorders.services.agent_runs) that the
Investigator and the Generator both go through."""

import pytest

from core.agents.engines.fake import FakeEngine, FakeReply
from core.models import AgentRun, AuditRecord, Event
from tests.workorders import factories as f
from workorders.agents import investigator
from workorders.services.agent_runs import work_order_agent_run
from workorders.services.investigation import work_order_generate, work_order_investigate

pytestmark = pytest.mark.django_db


@pytest.fixture
def detected(plant, vibration):
    alarm = f.make_alarm(vibration, value=5.0)
    return f.make_work_order(
        plant, triggered_by_alarm=alarm, triggered_by_signal_def=vibration, trigger_anomaly_time=alarm.raised_at
    )


def test_a_crash_while_building_the_prompt_is_a_failure_not_an_exception(detected):
    def hostile_spec(work_order):
        raise ValueError("prompt template broken")

    outcome = work_order_agent_run(
        work_order=detected,
        spec=hostile_spec,
        task_message=investigator.task_message,
        on_output=lambda output: ("output", output),
        on_failure=lambda reason, error: ("failure", reason, error),
    )
    assert outcome == ("failure", "error", "ValueError: prompt template broken")
    assert not AgentRun.objects.exists()


def test_the_finish_tool_output_reaches_on_output(detected):
    rca = {
        "root_cause": "bearing_wear: worn DE bearing",
        "confidence": 0.8,
        "contributing_factors": [],
        "recommended_action": "Replace the DE bearing.",
    }
    engine = FakeEngine(script=[FakeReply(tool_calls=[("submit_rca", rca)])])
    outcome = work_order_agent_run(
        work_order=detected,
        spec=investigator.build_spec,
        task_message=investigator.task_message,
        engine=engine,
        on_output=lambda output: output,
        on_failure=lambda reason, error: pytest.fail(f"failed: {reason} {error}"),
    )
    assert outcome["root_cause"] == rca["root_cause"]
    assert AgentRun.objects.get(agent="investigator").finish_reason == "submit_rca"


def test_the_investigators_agent_end_follows_its_rca_ready(detected):
    work_order_investigate(work_order_id=detected.pk, engine=FakeEngine(script=[FakeReply(text="Probably fine.")]))
    types = list(
        Event.objects.filter(type__in=("rca_ready", "agent_end")).order_by("id").values_list("type", flat=True)
    )
    assert types == ["rca_ready", "agent_end"]


def test_a_generator_that_never_submits_leaves_the_order_analyzed_with_the_reason_audited(detected):
    detected.status = "analyzed"
    detected.save()
    result = work_order_generate(work_order_id=detected.pk, engine=FakeEngine(script=[FakeReply(text="Done.")]))
    assert result is None
    detected.refresh_from_db()
    assert detected.status == "analyzed" and not detected.generated_by_agent
    record = AuditRecord.objects.get(action="work_order.generation_failed", target_id=str(detected.pk))
    assert record.details["reason"] == "end_turn"
