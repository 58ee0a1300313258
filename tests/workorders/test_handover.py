"""Shift handover: the agent's draft from the shift's records, edit → sign → acknowledge with
separation of duties, illegal moves, bounded inputs, search, and the agents' read of it."""

import json
from datetime import date as Date
from datetime import timedelta

import pytest
from django.utils import timezone

from core.access import ADMIN, OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.capabilities import CapabilityContext, dispatch
from core.errors import Conflict, Forbidden, InvalidInput
from core.models import AgentRun, AuditRecord, Event
from sentinel.services.limits import signal_limits_change
from tests.workorders import factories as f
from workorders.models import ShiftHandover
from workorders.services.handover import (
    MAX_HANDOVER_AGE_DAYS,
    OFFLINE_LABEL,
    handover_acknowledge,
    handover_draft,
    handover_edit,
    handover_sign,
)
from workorders.services.logbook import logbook_entry_create
from workorders.shifts import shift_at, shift_window

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders/shift/handovers"


def post(client, url, body=None):
    return client.post(url, json.dumps(body if body is not None else {}), content_type="application/json")


def patch(client, url, body):
    return client.patch(url, json.dumps(body), content_type="application/json")


@pytest.fixture
def incoming(make_user):
    return make_user("ivan", OPERATOR)


@pytest.fixture
def shift_records(operator, approver, cell, vibration):
    """One shift's worth: an open alarm, an order, a limit change and two logbook entries."""
    alarm = f.make_alarm(vibration, value=5.2)
    order = f.make_work_order(cell, title="Replace DE bearing", status="in_progress", priority="high")
    signal_limits_change(signal=vibration, changes={"alert": 4.8}, reason="chattering at 4.5", actor=approver)
    logbook_entry_create(cell=cell, author=operator, text="Humming from the DE bearing.", category="observation")
    logbook_entry_create(cell=cell, author=operator, text="Oil on the floor by P-02.", category="safety")
    return {"alarm": alarm, "order": order}


def test_the_agent_drafts_from_the_shifts_alarms_orders_limit_changes_and_logbook(operator, shift_records):
    handover = handover_draft(actor=operator)
    day, shift = shift_at(timezone.now())
    assert (handover.date, handover.shift, handover.status) == (day, shift, "draft")
    assert (handover.period_start, handover.period_end) == shift_window(day, shift)
    assert handover.outgoing == operator and handover.drafted_by == "shift_handover"
    assert handover.drafted_offline and handover.report.startswith(OFFLINE_LABEL)
    assert handover.report == handover.draft_report and handover.revision == 0
    body = handover.report
    alarm, order = shift_records["alarm"], shift_records["order"]
    assert f"#{alarm.pk} P-02 vibration_mm_s alert high" in body and "unacknowledged" in body
    assert f"WO-{order.pk} P-02 in_progress high: Replace DE bearing" in body
    assert "P-02 vibration_mm_s: alert 4.5 → 4.8 — chattering at 4.5 (by april)" in body
    assert "Humming from the DE bearing." in body
    assert "Safety\n- P-02 (olga, safety): Oil on the floor by P-02." in body
    assert "Watch next shift\n" in body and f"- WO-{order.pk}" in body.split("Watch next shift")[1]
    # drafted through the one agent loop with the ordinary read tools
    run = handover.agent_run
    assert (run.agent, run.engine, run.finish_reason) == ("shift_handover", "fake", "submit_handover")
    tools = set(run.steps.values_list("tool", flat=True))
    expected = {"find_cells", "get_work_orders", "get_limit_changes", "get_signal_anomalies", "get_logbook_entries"}
    assert expected <= tools
    assert AuditRecord.objects.filter(action="handover.draft", target_id=str(handover.pk)).exists()
    event = Event.objects.filter(type="handover_updated").last()
    assert event.payload["handover_id"] == handover.pk and event.payload["action"] == "drafted"


def test_a_run_without_a_draft_leaves_an_unlabelled_report_to_write_by_hand(operator):
    handover = handover_draft(actor=operator, engine=FakeEngine(script=[FakeReply(text="I will not.")]))
    assert handover.status == "draft" and not handover.drafted_offline and handover.drafted_by == ""
    assert "could not draft this report (end_turn)" in handover.report
    assert AgentRun.objects.get(pk=handover.agent_run_id).agent == "shift_handover"


def test_edit_sign_acknowledge_with_separation_of_duties(operator, incoming):
    handover = handover_draft(actor=operator)
    edited = handover_edit(handover=handover, actor=operator, report="State of the plant\nAll quiet.\n")
    assert (edited.revision, edited.report) == (1, "State of the plant\nAll quiet.\n")
    assert edited.draft_report.startswith(OFFLINE_LABEL)  # the agent's draft is kept beside the edit

    with pytest.raises(Forbidden) as other_edits:
        handover_edit(handover=handover, actor=incoming, report="Mine now.")
    assert other_edits.value.code == "not_outgoing_operator"
    with pytest.raises(Forbidden):
        handover_sign(handover=handover, actor=incoming)
    with pytest.raises(Conflict) as early:
        handover_acknowledge(handover=handover, actor=incoming)
    assert early.value.extra["allowed"] == ["signed"]

    signed = handover_sign(handover=handover, actor=operator)
    assert signed.status == "signed" and signed.signed_at is not None
    with pytest.raises(Conflict) as late_edit:
        handover_edit(handover=handover, actor=operator, report="Changed my mind.")
    assert late_edit.value.code == "handover_not_draft"
    with pytest.raises(Conflict) as twice:
        handover_sign(handover=handover, actor=operator)
    assert twice.value.extra["allowed"] == ["acknowledged"]
    assert (twice.value.code, twice.value.extra["status"]) == ("illegal_transition", "signed")
    assert twice.value.message == f"Handover {handover.pk} is signed; it cannot become signed."
    with pytest.raises(Forbidden) as own:
        handover_acknowledge(handover=handover, actor=operator)
    assert own.value.code == "separation_of_duties"

    done = handover_acknowledge(handover=handover, actor=incoming, comment="Read; watching P-02.")
    assert (done.status, done.incoming, done.acknowledge_comment) == ("acknowledged", incoming, "Read; watching P-02.")
    assert ShiftHandover.objects.get(pk=handover.pk).report == "State of the plant\nAll quiet.\n"
    actions = list(
        AuditRecord.objects.filter(target_type="workorders.shift_handover").values_list("action", "actor_label")
    )
    assert actions == [
        ("handover.draft", "olga"),
        ("handover.edit", "olga"),
        ("handover.sign", "olga"),
        ("handover.acknowledge", "ivan"),
    ]
    sign = AuditRecord.objects.get(action="handover.sign")
    assert sign.details == {
        "date": handover.date.isoformat(),
        "shift": handover.shift,
        "status": "signed",
        "from": "draft",
        "revision": 1,
    }
    assert [e.payload["action"] for e in Event.objects.filter(type="handover_updated")] == [
        "drafted",
        "edited",
        "signed",
        "acknowledged",
    ]


def test_the_author_acknowledging_their_unsigned_draft_is_told_it_is_not_signed(operator):
    handover = handover_draft(actor=operator)
    with pytest.raises(Conflict) as early:
        handover_acknowledge(handover=handover, actor=operator)
    assert (early.value.code, early.value.extra["status"], early.value.extra["allowed"]) == (
        "illegal_transition",
        "draft",
        ["signed"],
    )
    assert "signed by you" not in early.value.message
    handover.refresh_from_db()
    assert handover.status == "draft" and handover.incoming is None
    assert not AuditRecord.objects.filter(action="handover.acknowledge").exists()


def test_even_an_admin_cannot_acknowledge_their_own_report(make_user):
    boss = make_user("ada", ADMIN)
    handover = handover_sign(handover=handover_draft(actor=boss), actor=boss)
    with pytest.raises(Forbidden):
        handover_acknowledge(handover=handover, actor=boss)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"date": timezone.localdate()}, "shift"),
        ({"shift": "night"}, "date"),
        ({"date": timezone.localdate() + timedelta(days=2), "shift": "morning"}, "date"),
        ({"date": timezone.localdate(), "shift": "graveyard"}, "shift"),
        ({"date": Date(9999, 12, 31), "shift": "night"}, "date"),  # its window overflowed (a 500)
        ({"date": Date(1, 1, 1), "shift": "morning"}, "date"),
        ({"date": timezone.localdate() - timedelta(days=MAX_HANDOVER_AGE_DAYS + 1), "shift": "morning"}, "date"),
    ],
)
def test_drafting_refuses_a_half_given_or_future_shift(operator, kwargs, field):
    with pytest.raises(InvalidInput) as refused:
        handover_draft(actor=operator, **kwargs)
    assert refused.value.field == field
    assert not ShiftHandover.objects.exists()


def test_a_missed_handover_is_drafted_within_the_week(operator):
    day = timezone.localdate() - timedelta(days=MAX_HANDOVER_AGE_DAYS)
    handover = handover_draft(actor=operator, date=day, shift="night")
    assert (handover.date, handover.shift) == (day, "night")
    assert (handover.period_start, handover.period_end) == shift_window(day, "night")


# --- API ---------------------------------------------------------------------------------------


def test_api_draft_edit_sign_acknowledge(client, operator, incoming, shift_records):
    client.force_login(operator)
    created = post(client, BASE)
    assert created.status_code == 201, created.content
    draft = created.json()
    assert draft["status"] == "draft" and draft["drafted_offline"] and draft["can_edit"] and draft["can_sign"]
    url = f"{BASE}/{draft['id']}"
    edited = patch(client, url, {"report": draft["report"] + "\nWatch next shift\n- P-02 seal drip\n"})
    assert edited.status_code == 200 and edited.json()["revision"] == 1
    signed = post(client, f"{url}/sign")
    assert signed.status_code == 200 and signed.json()["status"] == "signed" and not signed.json()["can_edit"]

    late = patch(client, url, {"report": "rewrite history"})
    assert late.status_code == 409 and late.json()["code"] == "handover_not_draft"
    own = post(client, f"{url}/acknowledge", {"comment": "me"})
    assert own.status_code == 403 and own.json()["code"] == "separation_of_duties"

    client.force_login(incoming)
    seen = client.get(url).json()
    assert seen["can_acknowledge"] and not seen["can_sign"]
    assert post(client, f"{url}/sign").status_code == 403  # a visible report, but not theirs to sign
    too_long = post(client, f"{url}/acknowledge", {"comment": "x" * 501})
    assert too_long.status_code == 422 and too_long.json()["field"] == "comment"
    ack = post(client, f"{url}/acknowledge", {"comment": "Taken over."})
    assert ack.status_code == 200 and ack.json()["status"] == "acknowledged" and ack.json()["incoming"] == "ivan"
    again = post(client, f"{url}/acknowledge")
    assert again.status_code == 409 and again.json()["allowed"] == []


def test_api_a_draft_is_its_authors_alone(client, operator, incoming):
    client.force_login(operator)
    draft = post(client, BASE).json()
    url = f"{BASE}/{draft['id']}"
    client.force_login(incoming)
    assert client.get(url).status_code == 404
    assert patch(client, url, {"report": "hijacked"}).status_code == 404
    assert post(client, f"{url}/sign").status_code == 404
    assert post(client, f"{url}/acknowledge").status_code == 404
    assert client.get(BASE).json()["count"] == 0
    assert ShiftHandover.objects.get(pk=draft["id"]).status == "draft"


@pytest.mark.parametrize(
    ("method", "suffix", "body", "field"),
    [
        ("patch", "", {"report": ""}, "report"),
        ("patch", "", {"report": "x" * 20_001}, "report"),
        ("patch", "", {"text": "wrong key"}, "report"),
        ("post", "/acknowledge", {"comment": 5}, "comment"),
    ],
)
def test_api_bad_input_is_422_naming_the_field(client, operator, method, suffix, body, field):
    client.force_login(operator)
    draft = post(client, BASE).json()
    response = (patch if method == "patch" else post)(client, f"{BASE}/{draft['id']}{suffix}", body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    assert ShiftHandover.objects.get(pk=draft["id"]).revision == 0


@pytest.mark.parametrize(
    ("day", "shift"), [("9999-12-31", "night"), ("0001-01-01", "morning"), ("2000-02-29", "night")]
)
def test_api_draft_refuses_a_date_outside_the_last_week(client, operator, day, shift):
    client.force_login(operator)
    response = post(client, BASE, {"date": day, "shift": shift})
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "date"
    assert not ShiftHandover.objects.exists() and not AgentRun.objects.exists()


def test_api_draft_bad_shift_is_422(client, operator):
    client.force_login(operator)
    bad = post(client, BASE, {"shift": "graveyard", "date": "2024-01-01"})
    assert bad.status_code == 422 and bad.json()["field"] == "shift"
    half = post(client, BASE, {"date": "2024-01-01"})
    assert half.status_code == 422 and half.json()["field"] == "shift"
    assert not ShiftHandover.objects.exists()


def test_api_scopes(client, make_user):
    assert client.get(BASE).status_code == 401
    client.force_login(make_user("nobody"))
    assert post(client, BASE).status_code == 403 and client.get(BASE).status_code == 403
    assert not ShiftHandover.objects.exists()


def test_search_finds_signed_reports_by_words(client, operator, incoming, make_user):
    first = handover_draft(actor=operator)
    handover_edit(handover=first, actor=operator, report="P-02 seal dripping; tray placed.")
    handover_sign(handover=first, actor=operator)
    second = handover_draft(actor=incoming)
    handover_edit(handover=second, actor=incoming, report="Conveyor C-01 belt slipping.")
    handover_sign(handover=second, actor=incoming)
    mine = handover_draft(actor=operator)  # a draft: only olga (and admins) see it

    client.force_login(make_user("otto", OPERATOR))
    ids = lambda **q: [h["id"] for h in client.get(BASE, q).json()["items"]]  # noqa: E731
    assert set(ids()) == {first.pk, second.pk}
    assert ids(q="seal P-02") == [first.pk]
    assert ids(q="ivan") == [second.pk]  # names too
    assert ids(q="seal conveyor") == []
    assert ids(status="draft") == []
    too_many = client.get(BASE, {"q": "a b c d e f g h i"})
    assert too_many.status_code == 422 and too_many.json()["field"] == "q"
    client.force_login(make_user("ada", ADMIN))
    assert mine.pk in ids(status="draft")


# --- capabilities -----------------------------------------------------------------------------


def test_agents_read_signed_handovers_and_limit_changes(operator, incoming, approver, vibration):
    signal_limits_change(signal=vibration, changes={"alert": 4.8}, reason="chattering", actor=approver)
    handover = handover_draft(actor=operator)
    handover_edit(
        handover=handover,
        actor=operator,
        report="State of the plant\nP-02 seal drip.\n\nWatch next shift\n- P-02 seal: check the tray hourly\n- none\n",
    )
    draft_only = handover_draft(actor=incoming)
    ctx = CapabilityContext(user=incoming)

    nothing = dispatch("workorders.get_handovers", {}, ctx=ctx)
    assert not nothing.is_error and nothing.content["handovers"] == []  # drafts are not the record
    handover_sign(handover=handover, actor=operator)
    found = dispatch("workorders.get_handovers", {"query": "seal"}, ctx=ctx)
    assert not found.is_error, found.message
    (row,) = found.content["handovers"]
    assert (row["id"], row["status"], row["outgoing"]) == (handover.pk, "signed", "olga")
    assert row["watch_next_shift"] == ["P-02 seal: check the tray hourly"]  # as edited and signed
    own_drafts = dispatch("workorders.get_handovers", {"status": "draft"}, ctx=ctx).content["handovers"]
    assert [h["id"] for h in own_drafts] == [draft_only.pk]
    bad = dispatch("workorders.get_handovers", {"limit": 500}, ctx=ctx)
    assert bad.is_error

    changes = dispatch("workorders.get_limit_changes", {"cell_id": vibration.cell_id}, ctx=ctx)
    assert not changes.is_error, changes.message
    (change,) = changes.content["changes"]
    assert (change["signal_key"], change["change"], change["reason"]) == (
        "vibration_mm_s",
        "alert 4.5 → 4.8",
        "chattering",
    )
    since = (timezone.now() + timedelta(hours=1)).isoformat()
    assert dispatch("workorders.get_limit_changes", {"since": since}, ctx=ctx).content["changes"] == []
    backwards = dispatch("workorders.get_limit_changes", {"since": since, "until": "2020-01-01T00:00:00Z"}, ctx=ctx)
    assert backwards.is_error


def test_the_operator_chat_agent_can_read_handovers():
    from assistant.agents.qa import qa_tools

    assert {"workorders.get_handovers", "workorders.get_limit_changes"} <= set(qa_tools())


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_two_incoming_operators_racing_one_acknowledges(operator, make_user):
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from django.db import connection

    handover = handover_sign(handover=handover_draft(actor=operator), actor=operator)
    rivals = [make_user("ivan", OPERATOR), make_user("inga", OPERATOR)]
    barrier = Barrier(2)

    def acknowledge(user):
        barrier.wait()
        try:
            handover_acknowledge(handover=handover.pk, actor=user, comment=user.username)
            return "ok"
        except Conflict:
            return "conflict"
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(acknowledge, rivals))
    assert outcomes == ["conflict", "ok"]
    done = ShiftHandover.objects.get(pk=handover.pk)
    assert done.status == "acknowledged" and done.acknowledge_comment == done.incoming.username
    assert AuditRecord.objects.filter(action="handover.acknowledge").count() == 1
