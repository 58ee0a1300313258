"""Honest offline mode: the work-order data says which engine wrote the RCA (the Investigator's
AgentRun.engine), so the Control Room and the work-order page can mark an offline demo RCA."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import AgentRun
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use
from tests.workorders import factories as f
from workorders.services import work_order_transition
from workorders.services.investigation import work_order_investigate
from workorders.views import control_room_snapshot

pytestmark = pytest.mark.django_db


def page_work_order(client, wo_id: int) -> dict:
    body = client.get(f"/workorders/{wo_id}/").content.decode()
    found = re.search(r'<script id="wo-page-data" type="application/json">(.*?)</script>', body)
    return json.loads(found.group(1))["work_order"]


def room_work_order(client, wo_id: int) -> dict:
    rows = client.get("/control-room/state").json()["work_orders"]
    return next(w for w in rows if w["id"] == wo_id)


def test_an_offline_investigation_is_marked_offline_on_the_page_the_room_and_the_api(client, operator, plant):
    # Given a detected order investigated by the offline engine (the test settings' default)
    wo = f.make_work_order(plant, title="P-02 vibration")
    work_order_investigate(work_order_id=wo.pk)
    run = AgentRun.objects.get(subject_type="work_order", subject_id=str(wo.pk), agent="investigator")
    assert run.engine == "fake"
    client.force_login(operator)
    # Then every view of the order says the RCA came from the offline engine
    expected = {"engine": "fake", "real_provider": False}
    page = page_work_order(client, wo.pk)
    assert page["rca_summary"] and page["rca_engine"] == expected
    assert room_work_order(client, wo.pk)["rca_engine"] == expected
    assert client.get(f"/api/v1/workorders/{wo.pk}/execution").json()["rca_engine"] == expected
    assert client.get(f"/api/v1/workorders/{wo.pk}").json()["rca_engine"] == expected  # the room's rca_ready refresh


def test_an_rca_from_a_real_provider_carries_no_offline_mark(client, operator, plant):
    rca = {
        "root_cause": "bearing_wear: vibration rose from 3 to 5 mm/s with the bearing temperature.",
        "confidence": 0.8,
        "contributing_factors": ["lubrication interval exceeded"],
        "recommended_action": "Replace the drive-end bearing.",
    }
    wo = f.make_work_order(plant, title="P-02 vibration")
    with (
        AnthropicFakeServer() as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        server.push(anthropic_stream([tool_use("toolu_1", "submit_rca", rca)], stop_reason="tool_use"))
        work_order_investigate(work_order_id=wo.pk)
    wo.refresh_from_db()
    assert wo.status == "analyzed" and wo.rca_summary.startswith("bearing_wear")
    client.force_login(operator)
    expected = {"engine": "anthropic", "real_provider": True}
    assert page_work_order(client, wo.pk)["rca_engine"] == expected
    assert room_work_order(client, wo.pk)["rca_engine"] == expected


def test_a_persons_rca_and_an_order_without_one_carry_no_engine(client, operator, plant):
    pending = f.make_work_order(plant, title="waiting")
    manual = f.make_work_order(plant, title="by hand")
    # A failed offline run happened before a person recorded the cause: the RCA is still the person's
    AgentRun.objects.create(agent="investigator", turn_id="t", engine="fake", subject_type="work_order",
                            subject_id=str(manual.pk))  # fmt: skip
    work_order_transition(
        work_order=manual, to_status="analyzed", actor=operator, rca_summary="Loose coupling, found on the round."
    )
    client.force_login(operator)
    assert page_work_order(client, pending.pk)["rca_engine"] is None
    assert page_work_order(client, manual.pk)["rca_engine"] is None


def test_an_engine_this_process_does_not_know_is_never_called_real(client, operator, plant):
    wo = f.make_work_order(plant, title="odd engine", rca_summary="something", rca_details={"agent": "investigator"})
    AgentRun.objects.create(agent="investigator", turn_id="t", engine="mystery", subject_type="work_order",
                            subject_id=str(wo.pk))  # fmt: skip
    client.force_login(operator)
    assert page_work_order(client, wo.pk)["rca_engine"] == {"engine": "mystery", "real_provider": False}


@pytest.mark.usefixtures("steady_registry")
def test_the_control_room_reads_the_engines_in_a_fixed_number_of_queries(
    operator, plant, django_assert_max_num_queries
):
    def orders(n: int) -> None:
        for _ in range(n):
            wo = f.make_work_order(plant, title="x", rca_summary="y", rca_details={"agent": "investigator"})
            AgentRun.objects.create(agent="investigator", turn_id="t", engine="fake", subject_type="work_order",
                                    subject_id=str(wo.pk))  # fmt: skip

    orders(2)
    with CaptureQueriesContext(connection) as few:
        control_room_snapshot()
    orders(8)
    with django_assert_max_num_queries(len(few.captured_queries)):
        snapshot = control_room_snapshot()
    shown = snapshot["work_orders"]
    assert len(shown) > 2 and all(w["rca_engine"] == {"engine": "fake", "real_provider": False} for w in shown)


def _diagnosis_cards() -> list[dict]:
    from core.models import Event

    renders = Event.objects.filter(type="ui_render").order_by("id")
    return [e.payload["props"] for e in renders if e.payload.get("component") == "diagnosis_card"]


def test_the_live_diagnosis_card_of_an_offline_run_carries_the_mark(plant):
    wo = f.make_work_order(plant, title="P-02 vibration")
    work_order_investigate(work_order_id=wo.pk)
    cards = _diagnosis_cards()
    assert cards and all(card["offline"] is True and card["engine"] == "fake" for card in cards)


def test_a_real_models_diagnosis_card_has_no_mark_and_cannot_set_one(plant):
    rca = {
        "root_cause": "bearing_wear: vibration rose from 3 to 5 mm/s with the bearing temperature.",
        "confidence": 0.8,
        "contributing_factors": ["lubrication interval exceeded"],
        "recommended_action": "Replace the drive-end bearing.",
    }
    wo = f.make_work_order(plant, title="P-02 vibration")
    # The model tries to put its own mark on the card: the props come from the run, not the call.
    card = {"cell_id": wo.cell_id, "title": "Bearing wear", "findings": ["vibration up"], "offline": True,
            "engine": "fake", "work_order_id": wo.pk}  # fmt: skip
    with (
        AnthropicFakeServer() as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        server.push(anthropic_stream([tool_use("toolu_0", "render_diagnosis_card", card)], stop_reason="tool_use"))
        server.push(anthropic_stream([tool_use("toolu_1", "submit_rca", rca)], stop_reason="tool_use"))
        work_order_investigate(work_order_id=wo.pk)
    cards = _diagnosis_cards()
    assert len(cards) == 1
    assert cards[0]["offline"] is False and cards[0]["engine"] is None
