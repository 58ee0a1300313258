import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.agents.engines.fake import FakeEngine, FakeReply
from core.models import AgentRun, Event
from tests.workorders import factories as f
from workorders.agents import investigator
from workorders.agents.kb import answer_kb_question
from workorders.models import FailureHistory
from workorders.services.investigation import work_order_generate, work_order_investigate
from workorders.tasks import investigate_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def detected(plant, vibration):
    alarm = f.make_alarm(vibration, value=5.0)
    return f.make_work_order(
        plant, triggered_by_alarm=alarm, triggered_by_signal_def=vibration, trigger_anomaly_time=alarm.raised_at
    )


class Broken(FakeEngine):
    def complete(self, request, *, on_delta=None):
        raise RuntimeError("provider down")


def assert_fallback(wo, reason):
    wo.refresh_from_db()
    assert wo.status == "analyzed"
    assert wo.confidence == 0.0
    assert wo.rca_summary.startswith("undetermined") and reason in wo.rca_summary
    assert wo.rca_details["fallback"] is True and wo.rca_details["reason"] == reason
    rca = Event.objects.get(type="rca_ready")
    assert rca.payload["work_order_id"] == wo.pk and rca.payload["confidence"] == 0.0
    assert not FailureHistory.objects.filter(work_order=wo).exists()


def test_investigator_crash_gives_a_fallback_rca_never_silence(detected):
    work_order_investigate(work_order_id=detected.pk, engine=Broken())
    assert_fallback(detected, "error")
    assert "provider down" in detected.rca_summary


def test_investigator_hitting_max_turns_gives_a_fallback_rca(detected):
    looping = FakeEngine(script=[FakeReply(tool_calls=[("get_equipment_kb", {"cell_id": detected.cell_id})])] * 20)
    work_order_investigate(work_order_id=detected.pk, engine=looping)
    assert_fallback(detected, "max_turns")
    assert AgentRun.objects.get(agent="investigator").turns == 12


def test_investigator_answering_without_submitting_gives_a_fallback_rca(detected):
    work_order_investigate(work_order_id=detected.pk, engine=FakeEngine(script=[FakeReply(text="Probably fine.")]))
    assert_fallback(detected, "end_turn")


def test_investigation_task_twice_gives_one_rca_and_one_failure(detected):
    investigate_task(detected.pk)
    investigate_task.delay(detected.pk)
    detected.refresh_from_db()
    assert detected.status == "analyzed"
    assert Event.objects.filter(type="rca_ready").count() == 1
    assert FailureHistory.objects.filter(work_order=detected).count() == 1
    assert AgentRun.objects.filter(agent="investigator").count() == 1


def test_the_investigator_prompt_carries_the_last_five_failures(detected):
    for i in range(4):
        FailureHistory.objects.create(cell=detected.cell, failure_time=detected.created_at, failure_mode=f"mode_{i}")
    spec = investigator.build_spec(detected)
    assert spec.system_prompt.count("\n- #") == 5
    assert (spec.use_case, spec.thinking, spec.max_turns, spec.timeout_seconds) == ("reasoning", True, 12, 120)
    assert spec.finish_tool.name == "submit_rca"
    assert "ask_kb_builder" in spec.tools
    assert f'"cell_id": {detected.cell_id}' in investigator.task_message(detected)


def test_an_invalid_generated_order_is_repaired_or_leaves_the_order_analyzed(detected):
    detected.status = "analyzed"
    detected.save()
    bad = {"title": "x" * 300, "description": "d", "recommended_actions": [], "priority": "urgent"}
    work_order_generate(
        work_order_id=detected.pk, engine=FakeEngine(script=[FakeReply(tool_calls=[("submit_work_order", bad)])])
    )
    detected.refresh_from_db()
    assert detected.status == "analyzed" and not detected.generated_by_agent
    step = AgentRun.objects.get(agent="work_order_generator").steps.get(tool="submit_work_order")
    assert step.is_error and "priority" in step.error and "title" in step.error


@pytest.mark.usefixtures("steady_registry")
def test_kb_question_is_answered_from_the_kb_without_writes_or_broadcasts(
    plant, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr("core.events.bus.broadcast", sent.append)
    events, runs = Event.objects.count(), AgentRun.objects.count()
    with django_capture_on_commit_callbacks() as callbacks, CaptureQueriesContext(connection) as queries:
        answer = answer_kb_question(plant.pk, "Which spare parts do we keep?")
    assert answer["source"] == "kb:spare_parts" and "SKF-6310-2Z-C3" in answer["answer"]
    assert 0 < answer["confidence"] <= 1
    writes = [
        q["sql"] for q in queries.captured_queries if q["sql"].split()[0].upper() in ("INSERT", "UPDATE", "DELETE")
    ]
    assert writes == [] and callbacks == [] and sent == []
    assert (Event.objects.count(), AgentRun.objects.count()) == (events, runs)

    mode = answer_kb_question(plant.pk, "what about cavitation?")
    assert mode["source"] == "kb:failure_modes.cavitation"
    unknown = answer_kb_question(plant.pk, "what colour is it?")
    assert unknown["confidence"] < 0.3


def test_kb_question_never_raises(plant, monkeypatch):
    monkeypatch.setattr("workorders.agents.kb.get_engine", lambda: Broken())
    answer = answer_kb_question(plant.pk, "anything")
    assert answer["confidence"] == 0.0 and "provider down" in answer["answer"]
    assert answer_kb_question(999_999, "no such cell")["answer"]


def test_every_agent_tool_is_a_registered_capability_the_system_user_may_call():
    from core.capabilities import Tier, project_tools, registry
    from workorders.agents import generator
    from workorders.services import system_user

    for tools in (investigator.TOOLS, generator.TOOLS):
        assert all(registry.get(name) is not None for name in tools)
        projected = project_tools(allow=tools, max_tier=Tier.READ, user=system_user())
        assert {t["name"] for t in projected} == set(tools)


def test_investigation_job_resolver_states(cell):
    from core.capabilities import JobHandle, job_status

    wo = f.make_work_order(cell)
    assert job_status(JobHandle("investigation", str(wo.pk)))[0] == "pending"
    wo.status = "cancelled"
    wo.save()
    assert job_status(JobHandle("investigation", str(wo.pk)))[0] == "failed"
    assert job_status(JobHandle("investigation", "999999"))[0] == "failed"


def test_the_offline_rca_gives_peaks_as_a_reader_would_write_them(cell, vibration):
    """An evidence signal's peak came raw from its features (the demo's work order read
    "bearing_temp_c peaked at 73.2754 °C"); the breach pattern's were already rounded."""
    temperature = f.make_signal(
        cell, "bearing_temp_c", display_name="Bearing temperature", unit="°C", alert=80.0, trip=95.0
    )
    f.ramp(vibration, peak=5.123456)
    f.ramp(temperature, start=61.4, peak=73.2864)
    f.make_kb(cell)
    f.make_history(cell)
    alarm = f.make_alarm(vibration, value=5.0)
    wo = f.make_work_order(
        cell, triggered_by_alarm=alarm, triggered_by_signal_def=vibration, trigger_anomaly_time=alarm.raised_at
    )
    work_order_investigate(work_order_id=wo.pk, engine=FakeEngine())
    wo.refresh_from_db()
    factors = sorted(x for x in wo.rca_details["contributing_factors"] if " peaked at " in x)
    assert factors[0].startswith("bearing_temp_c peaked at 73.29 °C with 0 min"), factors  # evidence, not breach
    assert factors[1].startswith("vibration_mm_s peaked at 5.12 mm/s"), factors
