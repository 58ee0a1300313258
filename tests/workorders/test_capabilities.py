import pytest
from django.utils import timezone

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, dispatch, job_status, project_tools, registry
from core.events.render_props import validate_props
from core.models import Event
from tests.workorders import factories as f
from workorders.models import LogbookEntry, ShiftAssignment

pytestmark = pytest.mark.django_db

READ = [
    "get_current_signals", "get_signal_trends", "get_signal_anomalies", "get_equipment_kb", "get_failure_history",
    "get_logbook_entries", "get_shift_assignments", "get_work_orders", "get_work_order", "get_oee", "get_mtbf",
    "get_mttr", "render_signal_chart", "render_diagnosis_card", "render_pattern_match", "render_bar_chart",
    "render_equipment_kb_card", "render_kb_progress", "render_work_order_card", "ask_kb_builder", "answer_kb_question",
]  # fmt: skip
MUTATE = ["update_equipment_kb", "update_work_order", "raise_work_order"]


def call(user, name, **args):
    result = dispatch(f"workorders.{name}", args, ctx=CapabilityContext(user=user))
    assert not result.is_error, result.message
    return result.content


def test_every_capability_is_registered_with_its_tier_and_operator_scope():
    for name in READ + MUTATE + ["start_investigation"]:
        cap = registry.get(f"workorders.{name}")
        assert cap is not None and cap.tool_name == name
        assert cap.scopes == (OPERATOR,)
    assert {registry.get(n).tier for n in READ} == {Tier.READ}
    assert {registry.get(n).tier for n in MUTATE} == {Tier.MUTATE}
    assert registry.get("start_investigation").tier == Tier.SAFE
    assert registry.get("start_investigation").returns_job
    assert registry.get("ask_kb_builder").handoff_to == "kb_builder"
    read_tools = {t["name"] for t in project_tools(allow=READ + MUTATE, max_tier=Tier.READ)}
    assert read_tools == set(READ)


def test_a_user_without_the_operator_scope_is_refused(plant, make_user):
    result = dispatch(
        "workorders.get_current_signals", {"cell_id": plant.pk}, ctx=CapabilityContext(user=make_user("x"))
    )
    assert result.is_error and "operator" in result.message


def test_signal_reads(plant, vibration, operator):
    current = call(operator, "get_current_signals", cell_id=plant.pk)
    vib = next(s for s in current["signals"] if s["key"] == "vibration_mm_s")
    assert (vib["value"], vib["state"], vib["thresholds"]["alert"]) == (5.0, "alert", 4.5)

    trends = call(operator, "get_signal_trends", cell_id=plant.pk, minutes=60, buckets=6)
    vib = next(s for s in trends["signals"] if s["key"] == "vibration_mm_s")
    assert len(vib["buckets"]) == 6 and {"start", "min", "avg", "max", "n"} <= set(vib["buckets"][0])
    assert vib["peak"] == 5.0 and vib["breach"]["direction"] == "high"
    assert sum(b["n"] for b in vib["buckets"]) >= 59
    by_ids = call(operator, "get_signal_trends", signal_def_ids=[vibration.pk], minutes=30, buckets=3)
    assert [s["signal_def_id"] for s in by_ids["signals"]] == [vibration.pk]
    bad = dispatch("workorders.get_signal_trends", {"minutes": 5}, ctx=CapabilityContext(user=operator))
    assert bad.is_error and "cell_id or signal_def_ids" in bad.message

    f.make_alarm(vibration)
    anomalies = call(operator, "get_signal_anomalies", cell_id=plant.pk)["anomalies"]
    assert anomalies[0]["key"] == "vibration_mm_s" and anomalies[0]["severity"] == "alert"


def test_maintenance_reads(plant, operator):
    kb = call(operator, "get_equipment_kb", cell_id=plant.pk)
    assert "bearing_wear" in kb["data"]["failure_modes"]
    history = call(operator, "get_failure_history", cell_id=plant.pk, limit=2)["failures"]
    assert len(history) == 2 and history[0]["failure_time"] > history[1]["failure_time"]
    assert set(history[0]) >= {"failure_mode", "root_cause", "signal_patterns", "resolved_time"}

    LogbookEntry.objects.create(cell=plant, time=timezone.now(), author="Tom", text="Humming from DE bearing")
    assert call(operator, "get_logbook_entries", cell_id=plant.pk)["entries"][0]["text"] == "Humming from DE bearing"

    now = timezone.now()
    ShiftAssignment.objects.create(
        date=timezone.localdate(),
        shift="morning",
        technician="Marta",
        skills=["mechanical"],
        starts_at=now,
        ends_at=now,
        line=plant.line,
    )
    shifts = call(operator, "get_shift_assignments", cell_id=plant.pk)["assignments"]
    assert [s["technician"] for s in shifts] == ["Marta"]

    wo = f.make_work_order(plant, priority="high")
    listed = call(operator, "get_work_orders", cell_id=plant.pk, priority="high")["work_orders"]
    assert [w["id"] for w in listed] == [wo.pk]
    detail = call(operator, "get_work_order", work_order_id=wo.pk)
    assert detail["id"] == wo.pk and "events" in detail and "rca_summary" in detail
    missing = dispatch("workorders.get_work_order", {"work_order_id": 999}, ctx=CapabilityContext(user=operator))
    assert missing.is_error and "not found" in missing.message

    assert call(operator, "get_oee", cell_id=plant.pk, days=30)["oee"] is None
    assert call(operator, "get_mtbf", cell_id=plant.pk)["failures"] == 3
    assert call(operator, "get_mttr", cell_id=plant.pk)["mttr_hours"] == 4.0


def test_mutations_go_through_the_services(plant, operator):
    wo = f.make_work_order(plant)
    updated = call(
        operator,
        "update_work_order",
        work_order_id=wo.pk,
        title="Replace bearing",
        required_parts=[{"ref": "SKF-6310-2Z-C3", "qty": 1}],
        priority="high",
        to_status="analyzed",
        rca_summary="bearing_wear: DE bearing worn",
    )
    assert (updated["title"], updated["priority"], updated["status"]) == ("Replace bearing", "high", "analyzed")
    assert updated["required_parts"] == [{"ref": "SKF-6310-2Z-C3", "qty": 1}]
    illegal = dispatch(
        "workorders.update_work_order",
        {"work_order_id": wo.pk, "to_status": "completed"},
        ctx=CapabilityContext(user=operator),
    )
    assert illegal.is_error and "cannot go from analyzed to completed" in illegal.message

    kb = call(operator, "update_equipment_kb", cell_id=plant.pk, patch={"notes": "checked"}, note="walkdown")
    assert kb["data"]["notes"] == "checked" and "bearing_wear" in kb["data"]["failure_modes"]


def test_render_tools_return_component_and_props_with_cell_id(plant, vibration, operator):
    failure = plant.failures.first()
    wo = f.make_work_order(plant)
    renders = {
        "render_signal_chart": {"signal_def_ids": [vibration.pk], "minutes": 60},
        "render_diagnosis_card": {"cell_id": plant.pk, "title": "Bearing", "findings": ["vibration up"]},
        "render_pattern_match": {
            "cell_id": plant.pk,
            "failure_id": failure.pk,
            "current_pattern": {"vibration_mm_s": {"peak": 5.0}},
        },
        "render_bar_chart": {"cell_id": plant.pk, "title": "Failures", "labels": ["a", "b"], "values": [1, 2]},
        "render_equipment_kb_card": {"cell_id": plant.pk},
        "render_kb_progress": {"cell_id": plant.pk, "stage": "reading_kb", "message": "KB read", "done": 1, "total": 3},
        "render_work_order_card": {"work_order_id": wo.pk, "printable": True},
    }
    for name, args in renders.items():
        content = call(operator, name, **args)
        assert set(content) >= {"component", "props"}, name
        assert content["component"] == name.removeprefix("render_")
        assert content["props"]["cell_id"] == plant.pk, name
        # what the tool returns is exactly what the ui_render contract accepts for its component
        assert validate_props(content["component"], content["props"]) == content["props"], name
    card = call(operator, "render_work_order_card", work_order_id=wo.pk, printable=True)["props"]
    assert card["printable"] is True and card["print_url"] == f"/workorders/{wo.pk}/print"
    assert call(operator, "render_work_order_card", work_order_id=wo.pk)["props"]["print_url"] is None
    too_far = dispatch(
        "workorders.render_kb_progress",
        {"cell_id": plant.pk, "stage": "x", "done": 4, "total": 3},
        ctx=CapabilityContext(user=operator),
    )
    assert too_far.is_error and "done" in too_far.message
    chart = call(operator, "render_signal_chart", signal_def_ids=[vibration.pk])["props"]
    assert chart["series"][0]["key"] == "vibration_mm_s" and chart["series"][0]["points"]
    bad = dispatch(
        "workorders.render_bar_chart",
        {"cell_id": plant.pk, "title": "x", "labels": ["a"], "values": [1, 2]},
        ctx=CapabilityContext(user=operator),
    )
    assert bad.is_error


def test_start_investigation_returns_a_job_resolved_when_analyzed(plant, operator, django_capture_on_commit_callbacks):
    wo = f.make_work_order(plant)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = dispatch("start_investigation", {"work_order_id": wo.pk}, ctx=CapabilityContext(user=operator))
    assert result.job is not None and (result.job.kind, result.job.ref) == ("investigation", str(wo.pk))
    assert len(callbacks) == 1
    assert job_status(result.job)[0] == "pending"
    callbacks[0]()  # the task runs eagerly: investigator → analyzed (the generator waits for its own commit)
    state, details = job_status(result.job)
    assert state == "done" and details["status"] == "analyzed" and details["rca_summary"].startswith("bearing_wear")


def test_ask_kb_builder_runs_the_kb_agent_as_a_handoff(plant, operator):
    answer = call(operator, "ask_kb_builder", cell_id=plant.pk, question="How do we fix bearing wear?")
    assert answer["source"] == "kb:failure_modes.bearing_wear" and answer["confidence"] > 0.5
    assert list(Event.objects.filter(payload__agent="kb_builder").values_list("type", flat=True))[:1] == ["agent_start"]
    end = Event.objects.get(type="agent_end", payload__agent="kb_builder")
    assert end.payload["finish_reason"] == "answered"


def test_answer_kb_question_capability(plant, operator):
    answer = call(operator, "answer_kb_question", cell_id=plant.pk, question="Which spare parts are on hand?")
    assert answer["source"] == "kb:spare_parts"
    assert not Event.objects.exists()
