"""The end-to-end chain: alarm → detected → analyzed (RCA citing the past bearing failure) → open."""

import pytest
from django.db import transaction

from core.models import Event
from sentinel.models import Alarm
from sentinel.signals import alarm_raised
from tests.workorders import factories as f
from workorders.models import FailureHistory, WorkOrder


def raise_alarm(signal) -> Alarm:
    """Through sentinel's detection service when present (it sends alarm_raised), else by hand."""
    with transaction.atomic():
        alarm = f.make_alarm(signal, value=5.0)
        alarm_raised.send(sender=Alarm, alarm=alarm)
    return alarm


def event_types(since_id: int) -> list[str]:
    return list(Event.objects.filter(id__gt=since_id).order_by("id").values_list("type", flat=True))


@pytest.mark.django_db
def test_alarm_to_open_work_order_with_rca_citing_past_bearing_failure(
    plant, vibration, django_capture_on_commit_callbacks
):
    before = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0

    with django_capture_on_commit_callbacks(execute=True):
        alarm = raise_alarm(vibration)

    wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
    assert wo.status == "open"
    assert wo.rca_summary.startswith("bearing_wear")
    bearing = FailureHistory.objects.get(cell=plant, failure_mode="bearing_wear", work_order__isnull=True)
    assert bearing.failure_time.date().isoformat() in wo.rca_summary
    assert wo.confidence > 0.7
    assert [p["ref"] for p in wo.required_parts] == ["SKF-6310-2Z-C3", "GREASE-LGHP2"]
    assert wo.generated_by_agent == "work_order_generator"
    assert list(wo.events.values_list("to_status", flat=True)) == ["detected", "analyzed", "open"]
    new_failure = FailureHistory.objects.get(work_order=wo)
    assert new_failure.signal_patterns["vibration_mm_s"]["peak"] == 5.0

    events = list(Event.objects.filter(id__gt=before).order_by("id"))
    types = [e.type for e in events]
    # the bus tells the story in order (other events, e.g. thinking and renders, interleave)
    assert is_subsequence(
        [
            "anomaly_detected",
            "ui_render",  # the sentinel alert banner
            "agent_start",  # investigator
            "tool_call_started",
            "tool_call_completed",
            "agent_handoff",  # investigator → kb_builder
            "agent_start",  # kb_builder, under its own turn
            "agent_end",  # kb_builder: answered
            "rca_ready",
            "agent_end",  # investigator: submit_rca, after its rca_ready
            "agent_start",  # work_order_generator
            "tool_call_started",
            "tool_call_completed",
            "agent_end",
            "work_order_ready",
        ],
        types,
    )
    assert types[0] == "anomaly_detected" and events[0].payload["work_order_id"] == wo.pk
    assert events[1].payload["component"] == "alert_banner" and events[1].payload["agent"] == "sentinel"
    milestones = [t for t in types if t in ("anomaly_detected", "rca_ready", "work_order_ready")]
    assert milestones == ["anomaly_detected", "rca_ready", "work_order_ready"]
    starts = {e.payload["agent"]: e.payload for e in events if e.type == "agent_start"}
    assert set(starts) == {"investigator", "kb_builder", "work_order_generator"}
    investigator_turn, kb_turn = starts["investigator"]["turn_id"], starts["kb_builder"]["turn_id"]
    rca = next(e for e in events if e.type == "rca_ready")
    assert rca.turn_id == investigator_turn
    assert rca.payload["rca_summary"] == wo.rca_summary
    # the handed-off KB agent runs under its own turn, nested under the Investigator's
    assert kb_turn != investigator_turn
    assert starts["kb_builder"] == {"agent": "kb_builder", "turn_id": kb_turn, "parent_turn_id": investigator_turn}
    assert starts["investigator"]["parent_turn_id"] is None
    handoff = next(e for e in events if e.type == "agent_handoff")
    assert handoff.payload["turn_id"] == investigator_turn and handoff.payload["to_agent"] == "kb_builder"
    assert {e.turn_id for e in events if e.payload.get("agent") == "kb_builder"} == {kb_turn}
    # agent_end names how each run ended: the finishing tool, "answered" for the KB agent
    ends = {e.payload["agent"]: e for e in events if e.type == "agent_end"}
    assert ends["investigator"].payload == {
        "agent": "investigator",
        "turn_id": investigator_turn,
        "finish_reason": "submit_rca",
    }
    assert ends["kb_builder"].payload["finish_reason"] == "answered"
    assert ends["work_order_generator"].payload["finish_reason"] == "submit_work_order"
    assert rca.id < ends["investigator"].id  # … rca_ready, agent_end(finish_reason="submit_rca")
    investigator_events = [e.type for e in events if e.turn_id == investigator_turn]
    assert investigator_events[-2:] == ["rca_ready", "agent_end"]
    renders = [e.payload for e in events if e.type == "ui_render"]
    assert {r["component"] for r in renders} >= {"alert_banner", "signal_chart", "pattern_match"}
    assert all(r["props"]["cell_id"] == plant.pk for r in renders)
    thoughts = [e.payload for e in events if e.type == "thinking_delta"]
    assert thoughts and all(set(t) == {"agent", "content", "turn_id"} for t in thoughts)


@pytest.mark.django_db
def test_offline_kb_builder_and_generator_draw_their_render_components(
    plant, vibration, django_capture_on_commit_callbacks
):
    """The offline chain shows the KB agent's render set [EquipmentKbCard, KbProgress] under its own
    turn, and the Generator's printable work order card before its agent_end and work_order_ready."""
    before = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
    with django_capture_on_commit_callbacks(execute=True):
        alarm = raise_alarm(vibration)
    wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
    events = list(Event.objects.filter(id__gt=before).order_by("id"))
    starts = {e.payload["agent"]: e.payload["turn_id"] for e in events if e.type == "agent_start"}
    renders = [e for e in events if e.type == "ui_render"]

    kb = [e.payload for e in renders if e.payload["agent"] == "kb_builder"]
    assert [r["component"] for r in kb] == ["kb_progress", "equipment_kb_card", "kb_progress"]
    assert all(r["turn_id"] == starts["kb_builder"] and r["props"]["cell_id"] == plant.pk for r in kb)
    progress = [(r["props"]["done"], r["props"]["total"]) for r in kb if r["component"] == "kb_progress"]
    assert progress == [(0, 2), (2, 2)]
    card = next(r for r in kb if r["component"] == "equipment_kb_card")["props"]
    assert card["cell_tag"] == plant.tag and card["kb"]  # the cell's KB, drawn from the database

    (order_card,) = [e for e in renders if e.payload["component"] == "work_order_card"]
    assert order_card.payload["agent"] == "work_order_generator"
    assert order_card.payload["turn_id"] == starts["work_order_generator"]
    props = order_card.payload["props"]
    assert props["printable"] is True and props["print_url"] == f"/workorders/{wo.pk}/print"
    assert props["work_order"]["id"] == wo.pk and props["cell_id"] == plant.pk
    generator_end = next(e for e in events if e.type == "agent_end" and e.payload["agent"] == "work_order_generator")
    ready = next(e for e in events if e.type == "work_order_ready")
    assert order_card.id < generator_end.id < ready.id


def is_subsequence(expected: list[str], actual: list[str]) -> bool:
    remaining = iter(actual)
    return all(any(item == seen for seen in remaining) for item in expected)
