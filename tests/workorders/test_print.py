"""The printable work order (/workorders/<id>/print): content, who may open it, hostile input."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from tests.workorders import factories as f
from workorders.models import WorkOrder
from workorders.views_print import permits_for

pytestmark = pytest.mark.django_db


def printable_order(plant, **kw):
    start = timezone.now().replace(microsecond=0)
    defaults = {
        "status": "open",
        "priority": "high",
        "rca_summary": "bearing_wear: the current pattern matches the bearing failure of 2026-03-02.",
        "confidence": 0.86,
        "rca_details": {
            "failure_mode": "bearing_wear",
            "contributing_factors": ["vibration_mm_s peaked at 5 mm/s with 12 min beyond its limit"],
            "similar_past_failure": "#3 bearing_wear 2026-03-02",
        },
        "recommended_actions": ["Isolate, lock out and drain the pump (LOTO)", "Pull the drive-end bearing"],
        "required_parts": [{"ref": "SKF-6310-2Z-C3", "qty": 3}, {"ref": "GREASE-LGHP2", "qty": 1}],
        "required_skills": ["mechanical"],
        "estimated_duration_min": 180,
        "suggested_window_start": start,
        "suggested_window_end": start + timezone.timedelta(minutes=180),
    }
    return f.make_work_order(plant, **{**defaults, **kw})


def test_operator_gets_the_printable_order_with_actions_parts_permits_window_and_rca(client, plant, operator):
    wo = printable_order(plant)
    client.force_login(operator)
    response = client.get(f"/workorders/{wo.pk}/print")
    assert response.status_code == 200
    html = response.content.decode()
    for text in (
        f"WO-{wo.pk}",
        "Isolate, lock out and drain the pump (LOTO)",  # actions
        "SKF-6310-2Z-C3",  # parts, with the KB's name and stock
        "Isolation / lock-out tag-out (LOTO)",  # permits the actions call for
        "Line break / depressurise",
        "mechanical",  # skills
        wo.suggested_window_start.strftime("%Y-%m-%d %H:%M"),  # window
        "bearing_wear: the current pattern matches",  # RCA summary
        "confidence 86%",
        "work_order_print_paper.css",  # the print stylesheet
    ):
        assert text in html, text
    ctx = response.context
    short = {p["ref"]: p["short"] for p in ctx["parts"]}
    assert short == {"SKF-6310-2Z-C3": True, "GREASE-LGHP2": False}  # 3 needed, 2 on hand in the KB


def test_approvers_may_print_and_people_without_a_watch_scope_may_not(client, plant, approver, make_user):
    wo = printable_order(plant)
    client.force_login(approver)
    assert client.get(f"/workorders/{wo.pk}/print").status_code == 200
    client.force_login(make_user("nobody"))
    refused = client.get(f"/workorders/{wo.pk}/print")
    assert refused.status_code == 403 and wo.title.encode() not in refused.content
    client.logout()
    anonymous = client.get(f"/workorders/{wo.pk}/print")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_unknown_order_is_404_and_hostile_text_is_escaped(client, plant, operator):
    client.force_login(operator)
    assert client.get("/workorders/999999/print").status_code == 404
    wo = printable_order(plant, title="<script>alert(1)</script>", recommended_actions=["<img src=x onerror=alert(2)>"])
    html = client.get(f"/workorders/{wo.pk}/print").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html


def test_permits_come_from_the_kb_when_it_lists_them():
    assert permits_for(["Swap the valve"], {"permits": ["Cold work permit"]}) == ["Cold work permit"]
    assert permits_for(["Swap the valve"], {}) == []
    assert permits_for(["Weld the bracket", "Lift with the crane"], {}) == ["Hot work", "Lifting operation"]


def test_an_rca_of_the_offline_engine_is_marked_on_the_printed_order_and_a_persons_is_not(client, plant, operator):
    """The Control Room and the work-order page mark an offline demo RCA; the printed sheet, taken
    to the pump, showed it as if a model had written it."""
    from core.models import AgentRun

    offline = printable_order(plant)
    AgentRun.objects.create(agent="investigator", turn_id="t", engine="fake", subject_type="work_order",
                            subject_id=str(offline.pk))  # fmt: skip
    by_hand = printable_order(plant, rca_details={"manual": True, "failure_mode": "seal_leak"})
    client.force_login(operator)
    marked = client.get(f"/workorders/{offline.pk}/print").content.decode()
    assert 'id="print-rca-offline"' in marked and "offline demo engine" in marked
    unmarked = client.get(f"/workorders/{by_hand.pk}/print").content.decode()
    assert "offline demo engine" not in unmarked


def test_a_completed_order_prints_the_technicians_report_in_the_sign_off_not_blanks(client, cell, operator):
    """WO-1 of the demo, completed with a report, printed an empty sign-off (technician, date,
    actual cause, hours) to be filled in by hand again; an open order keeps the blanks."""
    from tests.workorders.execution_helpers import analysed_order, report
    from workorders.services.execution import work_order_complete, work_order_start

    wo = analysed_order(cell)
    client.force_login(operator)
    open_sheet = client.get(f"/workorders/{wo.pk}/print").content.decode()
    assert 'id="print-actual-cause"' not in open_sheet
    work_order_start(work_order=wo, actor=operator)
    work_order_complete(
        work_order=wo, actor=operator,
        **report(rca_verdict="corrected", actual_root_cause="<b>Misaligned</b> after the motor swap", labour_hours=2.5),
    )  # fmt: skip
    html = client.get(f"/workorders/{wo.pk}/print").content.decode()
    assert "Replaced the drive-end bearing, regreased" in html
    assert "&lt;b&gt;Misaligned&lt;/b&gt; after the motor swap" in html and "<b>Misaligned" not in html
    assert "2.50 h" in html and operator.get_username() in html


def test_every_time_on_the_sheet_names_its_zone_the_plants_not_a_stated_utc(client, plant, operator, settings):
    """The sheet is read at the pump, away from the screen: each time says which zone it is in, and
    it is the zone it was rendered in (TIME_ZONE), so a plant not on UTC does not read 'UTC'."""
    settings.TIME_ZONE = "Asia/Kolkata"  # +05:30, no daylight saving
    start = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)
    wo = printable_order(plant, suggested_window_start=start, suggested_window_end=start + timedelta(hours=3))
    WorkOrder.objects.filter(pk=wo.pk).update(created_at=start - timedelta(hours=1))
    client.force_login(operator)
    html = client.get(f"/workorders/{wo.pk}/print").content.decode()
    assert '<td id="print-window-start">2026-03-04 10:36 IST</td>' in html
    assert "<td>2026-03-04 13:36 IST</td>" in html  # window end
    assert "raised 2026-03-04 09:36 IST" in html
    assert "UTC" not in html
