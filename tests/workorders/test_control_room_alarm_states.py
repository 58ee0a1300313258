"""The Control Room snapshot says who did what to each alarm: acknowledged by; shelved by, why,
until; out of service by, why, since (out-of-service alarms are listed, not dropped), in a number of
queries that does not grow with the alarms."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sentinel.models import Cell, SignalDefinition
from sentinel.services import (
    alarm_acknowledge,
    alarm_put_out_of_service,
    alarm_return_to_service,
    alarm_shelve,
    alarm_unshelve,
)
from sentinel.services.detection import AlarmEscalation, alarm_escalate_many
from sentinel.thresholds import evaluate_threshold
from tests.workorders import factories as f
from workorders.views import control_room_snapshot

pytestmark = pytest.mark.django_db

HIDDEN_FIELDS = (
    "shelved_by",
    "shelve_reason",
    "shelved_at",
    "out_of_service_by",
    "out_of_service_reason",
    "out_of_service_since",
)


def _alarms(cell, n: int, start: int = 0) -> list:
    return [f.make_alarm(f.make_signal(cell, f"s{start + i}", display_name=f"S{start + i}")) for i in range(n)]


def test_a_shelved_alarm_names_who_shelved_it_not_who_acknowledged_it(client, cell, operator, make_user):
    tech = make_user("tech", "operator")
    acked, shelved = _alarms(cell, 2)
    alarm_acknowledge(alarm=acked, actor=operator)
    alarm_acknowledge(alarm=shelved, actor=operator)
    alarm_shelve(alarm=shelved, actor=tech, minutes=60, comment="  tech: swapping sensor cable ")

    client.force_login(operator)
    rows = {r["id"]: r for r in client.get("/control-room/state").json()["alarms"]}
    assert rows[acked.pk]["acknowledged_by"] == "olga"
    assert all(rows[acked.pk][k] is None for k in HIDDEN_FIELDS)
    row = rows[shelved.pk]
    shelved.refresh_from_db()
    assert (row["state"], row["shelved_by"], row["shelve_reason"]) == ("shelved", "tech", "tech: swapping sensor cable")
    assert row["shelved_until"] == shelved.shelved_until.isoformat()
    assert row["shelved_at"] and row["shelved_until_work_order_closes"] is False
    assert row["out_of_service_by"] is None and row["out_of_service_reason"] is None


def test_the_newest_shelve_is_named_after_an_unshelve_and_a_second_shelve(cell, operator, make_user):
    tech = make_user("tech", "operator")
    (alarm,) = _alarms(cell, 1)
    alarm_shelve(alarm=alarm, actor=operator, minutes=60, comment="first")
    alarm_unshelve(alarm=alarm, actor=operator)
    alarm_shelve(alarm=alarm, actor=tech, until_work_order_closes=True, comment="second")

    (row,) = control_room_snapshot()["alarms"]
    assert (row["shelved_by"], row["shelve_reason"], row["shelved_until_work_order_closes"]) == ("tech", "second", True)


def test_an_escalation_while_hidden_keeps_who_hid_it_and_why(cell, operator):
    """Detection records a trip reached while shelved (or out of service) as a move from the state
    to itself, with no actor or reason: that is not the move that hid it."""
    shelved, out = _alarms(cell, 2)
    alarm_shelve(alarm=shelved, actor=operator, minutes=60, comment="swapping cable")
    alarm_put_out_of_service(alarm=out, actor=operator, comment="instrument removed")
    alarm_escalate_many(
        escalations=[AlarmEscalation(a.pk, evaluate_threshold(a.signal, 7.5), 7.5) for a in (shelved, out)]
    )
    rows = {r["id"]: r for r in control_room_snapshot()["alarms"]}
    assert (rows[shelved.pk]["severity"], rows[shelved.pk]["shelved_by"], rows[shelved.pk]["shelve_reason"]) == (
        "trip", "olga", "swapping cable"
    )  # fmt: skip
    assert (rows[out.pk]["out_of_service_by"], rows[out.pk]["out_of_service_reason"]) == ("olga", "instrument removed")


def test_an_out_of_service_alarm_is_listed_with_who_why_and_since(client, cell, approver, operator):
    (alarm,) = _alarms(cell, 1)
    alarm_put_out_of_service(alarm=alarm, actor=operator, comment="transmitter replaced")

    client.force_login(approver)  # approvers watch the Control Room too
    (row,) = client.get("/control-room/state").json()["alarms"]
    assert (row["id"], row["state"]) == (alarm.pk, "out_of_service")
    assert (row["out_of_service_by"], row["out_of_service_reason"]) == ("olga", "transmitter replaced")
    assert row["out_of_service_since"] == alarm.events.get(to_state="out_of_service").created_at.isoformat()
    assert row["shelved_by"] is None and row["shelve_reason"] is None

    # Back in service, it is an ordinary annunciated alarm again: nothing says "out of service".
    alarm_return_to_service(alarm=alarm, actor=operator)
    (row,) = control_room_snapshot()["alarms"]
    assert row["state"] == "active_unack" and all(row[k] is None for k in HIDDEN_FIELDS)


def test_the_page_knows_the_unshelve_out_of_service_and_return_to_service_paths(client, operator):
    client.force_login(operator)
    paths = client.get("/").context["api_paths"]
    assert paths["alarm_unshelve"] == "/api/v1/alarms/{id}/unshelve"
    assert paths["alarm_put_out_of_service"] == "/api/v1/alarms/{id}/out-of-service"
    assert paths["alarm_return_to_service"] == "/api/v1/alarms/{id}/return-to-service"


def test_out_of_service_alarms_are_never_pushed_off_by_newer_active_ones(client, cell, operator):
    """A signal disabled in the admin put its alarms out of service long ago; enabled again, the
    operator must find them on the page to return them: 55 newer active alarms do not hide them."""
    old = timezone.now() - timedelta(days=3)
    parked = [f.make_alarm(f.make_signal(cell, f"old{i}"), raised_at=old) for i in range(2)]
    for alarm in parked:
        alarm_put_out_of_service(alarm=alarm, actor=operator, comment="signal old disabled in the admin by root")
    _alarms(cell, 55)

    client.force_login(operator)
    state = client.get("/control-room/state").json()
    listed = [r["id"] for r in state["alarms"] if r["state"] == "out_of_service"]
    assert listed == [a.pk for a in parked] and state["out_of_service_alarms"] == 2
    assert len([r for r in state["alarms"] if r["state"] != "out_of_service"]) == 50  # the newest active ones


def test_a_row_says_whether_its_signal_is_evaluated(cell, operator):
    evaluated, disabled = _alarms(cell, 2)
    for alarm in (evaluated, disabled):
        alarm_put_out_of_service(alarm=alarm, actor=operator, comment="maintenance")
    SignalDefinition.objects.filter(pk=disabled.signal_id).update(enabled=False)
    rows = {r["id"]: r for r in control_room_snapshot()["alarms"]}
    assert (rows[evaluated.pk]["signal_evaluated"], rows[disabled.pk]["signal_evaluated"]) == (True, False)
    Cell.objects.filter(pk=cell.pk).update(onboarding_complete=False)
    assert {r["signal_evaluated"] for r in control_room_snapshot()["alarms"]} == {False}


def test_a_user_without_a_scope_is_told_so_and_the_page_is_told_not_to_read(client, make_user, operator):
    client.force_login(make_user("visitor"))
    page = client.get("/").content.decode()
    assert 'data-can-watch="0"' in page and "cr-scope-notice" in page
    client.force_login(operator)
    assert 'data-can-watch="1"' in client.get("/").content.decode()


def test_the_alarm_rows_cost_a_fixed_number_of_queries(cell, operator, make_user, django_assert_max_num_queries):
    tech = make_user("tech", "operator")

    def hide(alarms: list) -> None:
        for i, alarm in enumerate(alarms):
            alarm_acknowledge(alarm=alarm, actor=operator)
            if i % 2:
                alarm_shelve(alarm=alarm, actor=tech, minutes=30, comment=f"why {i}")
            else:
                alarm_put_out_of_service(alarm=alarm, actor=tech, comment=f"why {i}")

    hide(_alarms(cell, 2))
    with CaptureQueriesContext(connection) as few:
        control_room_snapshot()
    hide(_alarms(cell, 10, start=2))
    with django_assert_max_num_queries(len(few.captured_queries)):
        rows = control_room_snapshot()["alarms"]
    assert len(rows) == 12
    assert all(r["shelved_by"] == "tech" or r["out_of_service_by"] == "tech" for r in rows)
    assert all((r["shelve_reason"] or r["out_of_service_reason"]).startswith("why ") for r in rows)
