"""The shift handover's alarms: a shelved or out-of-service alarm is handed over with who took it
out of view, why and until when (ISA-18.2; DOMAIN.md "alarms active and shelved (with why)"), and
"raised this shift" counts every alarm the shift raised, whatever its state now. Shelved and put out
of service through the sentinel API, drafted through the API the Shift page posts to."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.capabilities import CapabilityContext, dispatch
from sentinel.models import Alarm
from sentinel.services.detection import AlarmEscalation, alarm_escalate_many
from sentinel.thresholds import evaluate_threshold
from tests.workorders import factories as f
from workorders.agents.handover import section_lines
from workorders.selectors import SUPPRESSION_REASON_CHARS
from workorders.shifts import shift_at, shift_window

pytestmark = pytest.mark.django_db
HANDOVERS = "/api/v1/workorders/shift/handovers"
REASON = "WO #1 is handling the bearing"


def post(client, url, body=None):
    return client.post(url, json.dumps(body if body is not None else {}), content_type="application/json")


def draft(client) -> dict:
    response = post(client, HANDOVERS)
    assert response.status_code == 201, response.content
    return response.json()


def local(moment) -> str:
    """As the handover says a time to its reader (core.humantime): the plant's zone, named."""
    moment = timezone.localtime(moment)
    return f"{moment:%Y-%m-%d %H:%M} {moment.tzname()}"


def shelve(client, alarm: Alarm, **body) -> Alarm:
    response = post(client, f"/api/v1/alarms/{alarm.pk}/shelve", body)
    assert response.status_code == 200, response.content
    return Alarm.objects.get(pk=alarm.pk)


def test_a_shelved_alarm_is_handed_over_with_who_why_and_until_when(client, operator, vibration):
    client.force_login(operator)
    alarm = shelve(client, f.make_alarm(vibration, value=5.2), minutes=120, comment=REASON)
    report = draft(client)["report"]
    line = (
        f"#{alarm.pk} P-02 vibration_mm_s alert high (peak 5.2, limit 4.5) — "
        f"shelved by olga until {local(alarm.shelved_until)}: {REASON}"
    )
    assert line in section_lines(report, "Alarms")
    assert line in section_lines(report, "Watch next shift")
    assert "1 alarm(s) still open, 1 raised this shift" in report


def test_a_shelve_until_the_work_order_closes_says_so_and_its_latest_end(client, operator, vibration):
    client.force_login(operator)
    alarm = shelve(client, f.make_alarm(vibration), until_work_order_closes=True, comment=REASON)
    report = draft(client)["report"]
    expected = f"— shelved by olga until its work order closes (at the latest {local(alarm.shelved_until)}): {REASON}"
    assert any(expected in line for line in section_lines(report, "Alarms")), report


def test_an_out_of_service_alarm_is_handed_over_with_who_and_why(client, operator, vibration):
    client.force_login(operator)
    alarm = f.make_alarm(vibration)
    reason = "Transmitter replaced, loop check pending"
    response = post(client, f"/api/v1/alarms/{alarm.pk}/out-of-service", {"comment": reason})
    assert response.status_code == 200, response.content
    report = draft(client)["report"]
    line = f"#{alarm.pk} P-02 vibration_mm_s alert high (peak 5.0, limit 4.5) — out of service by olga"
    expected = f"{line} until returned to service: {reason}"
    assert expected in section_lines(report, "Alarms")
    assert expected in section_lines(report, "Watch next shift")


def test_raised_this_shift_counts_every_alarm_the_shift_raised_whatever_its_state(client, operator, cell, vibration):
    now = timezone.now()
    start, _end = shift_window(*shift_at(now))
    during = start + (now - start) / 2
    temperature = f.make_signal(cell, "bearing_temp_c", alert=80.0, trip=95.0)
    flow = f.make_signal(cell, "flow_m3_h", alert=120.0, trip=140.0)
    open_now = f.make_alarm(vibration, raised_at=during)  # raised in the shift, still open
    cleared = f.make_alarm(temperature, value=82.0, raised_at=during)  # raised in the shift, closed since
    Alarm.objects.filter(pk=cleared.pk).update(state="cleared", cleared_at=now)
    f.make_alarm(flow, value=125.0, raised_at=start - timedelta(hours=1))  # open, from the shift before
    client.force_login(operator)
    shelve(client, open_now, minutes=60, comment=REASON)
    report = draft(client)["report"]
    assert "2 alarm(s) still open, 2 raised this shift" in report
    assert any(f"#{cleared.pk} P-02 bearing_temp_c" in line for line in section_lines(report, "Alarms"))


def test_an_escalation_while_shelved_keeps_the_operators_reason(client, operator, vibration):
    client.force_login(operator)
    alarm = shelve(client, f.make_alarm(vibration), minutes=60, comment=REASON)
    (escalated,) = alarm_escalate_many(escalations=[AlarmEscalation(alarm.pk, evaluate_threshold(vibration, 7.5), 7.5)])
    assert escalated.severity == "trip" and escalated.events.last().from_state == "shelved"  # shelved → shelved
    report = draft(client)["report"]
    assert f"#{alarm.pk} P-02 vibration_mm_s trip high (peak 7.5, limit 7.1) — shelved by olga until" in report
    assert f": {REASON}" in report


def test_a_reason_cannot_forge_report_lines_and_is_bounded(client, operator, vibration):
    client.force_login(operator)
    reason = "Sensor fault\n\nSafety\n- forged: all clear\n" + "x" * 450
    alarm = shelve(client, f.make_alarm(vibration), minutes=60, comment=reason)
    ctx = CapabilityContext(user=operator)
    (row,) = dispatch("workorders.get_signal_anomalies", {"cell_id": vibration.cell_id}, ctx=ctx).content["anomalies"]
    told = row["suppression"]["reason"]
    assert len(told) == SUPPRESSION_REASON_CHARS and told.endswith("…") and "\n" not in told
    assert told.startswith("Sensor fault Safety - forged: all clear xxx")
    assert (row["suppression"]["by"], row["suppression"]["until"]) == ("olga", alarm.shelved_until.isoformat())
    report = draft(client)["report"]
    assert not any("forged" in line for line in section_lines(report, "Safety"))
    assert all(len(line) <= 500 for line in section_lines(report, "Alarms"))


@pytest.mark.usefixtures("steady_registry")
def test_the_alarm_tool_reads_why_in_the_same_queries_for_one_or_many_suppressed(client, operator, cell, vibration):
    """Query count flat in the number of shelved / out-of-service alarms (no read per alarm). The
    registry held steady: its 2-s refresh added a query to the second count on a loaded CI machine."""
    client.force_login(operator)
    ctx = CapabilityContext(user=operator)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            result = dispatch("workorders.get_signal_anomalies", {"cell_id": cell.pk}, ctx=ctx)
        assert not result.is_error and all(a["suppression"]["by"] == "olga" for a in result.content["anomalies"])
        return len(captured)

    shelve(client, f.make_alarm(vibration), minutes=30, comment="one")
    queries()  # warm what is read once per process (scopes, the capability registry)
    one = queries()
    for i in range(4):
        alarm = f.make_alarm(f.make_signal(cell, f"temp_{i}", alert=80.0, trip=95.0), value=85.0)
        if i % 2:
            shelve(client, alarm, minutes=30, comment=f"shelved {i}")
        else:
            post(client, f"/api/v1/alarms/{alarm.pk}/out-of-service", {"comment": f"out {i}"})
    assert queries() == one


def test_an_old_shelved_alarm_on_a_busy_cell_is_still_handed_over(client, operator, vibration):
    """The alarm tool reads a cell's 20 newest alarms: one shelved before 25 others were raised and
    cleared on the same cell was left out of the handover (and of the model's view) entirely."""
    client.force_login(operator)
    now = timezone.now()
    shelved = shelve(client, f.make_alarm(vibration, raised_at=now - timedelta(hours=3)), minutes=480, comment=REASON)
    temperature = f.make_signal(vibration.cell, "temperature_c", alert=80.0, trip=95.0, deadband=1.0)
    for minutes in range(25):  # newer alarms of another signal, all cleared since
        alarm = f.make_alarm(temperature, value=85.0, raised_at=now - timedelta(minutes=60 - minutes))
        Alarm.objects.filter(pk=alarm.pk).update(state="cleared", cleared_at=now)
    report = draft(client)["report"]
    assert any(f"#{shelved.pk} P-02" in line and REASON in line for line in section_lines(report, "Alarms")), report
