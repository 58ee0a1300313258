"""The operator chat on the seeded demo (scenario p02-bearing: P-02's vibration in alarm, WO-1 open),
through its REST route with the offline engine and the real maintenance capabilities: a question
about a signal gets its current value, a question naming a work order is answered about that
order, and a request to act (cancel, close, acknowledge, shelve… in any wording, negated or not)
changes nothing — it is answered with the facts read and where the operator does it."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

pytest.importorskip("workorders.capabilities")

from core.models import AgentRun, AuditRecord
from sentinel.models import Alarm, SignalLatest
from workorders.models import WorkOrder, WorkOrderEvent

pytestmark = pytest.mark.django_db
READ_ONLY = {"find_cells", "get_work_order", "get_work_orders", "get_signal_anomalies", "alarm_performance"}


@pytest.fixture
def demo(tmp_path, settings, django_capture_on_commit_callbacks):
    """seed_demo, then one round of the p02-bearing scenario: the P-02 vibration alarm raises WO-1."""
    settings.VAR_DIR = tmp_path
    call_command("seed_demo", credentials_file=tmp_path / "credentials.txt", stdout=io.StringIO())
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "simulate", "--scenario", "p02-bearing", "--once", "--ramp-seconds", "0", "--seed", "1",
            stdout=io.StringIO(),
        )  # fmt: skip
    order = WorkOrder.objects.get()
    alarm = Alarm.objects.get()
    assert (order.cell.tag, order.status, alarm.state) == ("P-02", "open", "active_unack")
    return order, alarm


@pytest.fixture
def ask(client):
    client.force_login(User.objects.get(username="operator"))

    def ask(question: str) -> dict:
        response = client.post(
            "/api/v1/agent/chat", {"messages": [{"role": "user", "content": question}]}, content_type="application/json"
        )
        assert response.status_code == 200, response.content
        body = response.json()
        assert not body["error"] and body["offline"] is True
        return body

    return ask


def latest(tag: str, key: str) -> str:
    value = SignalLatest.objects.get(signal__cell__tag=tag, signal__key=key).value
    return f"{round(value, 2):g}"


def snapshot(order: WorkOrder, alarm: Alarm) -> tuple:
    """What a request to act would change: the order, its history, the alarm, the audit trail."""
    order.refresh_from_db()
    alarm.refresh_from_db()
    return (
        order.status,
        order.updated_at,
        WorkOrderEvent.objects.count(),
        alarm.state,
        alarm.acknowledged_at,
        AuditRecord.objects.exclude(action__startswith="assistant.").count(),
        AgentRun.objects.filter(agent="investigator").count(),
    )


def test_the_vibration_now_is_the_current_value_against_its_limits(demo, ask):
    body = ask("what is the vibration on P-02 now?")
    assert f"P-02 Vibration (RMS) is {latest('P-02', 'vibration_mm_s')} mm/s now" in body["response"]
    assert "(beyond its alert limit; alert 4.5, trip 7.1)" in body["response"]
    assert [c["name"] for c in body["tool_calls"]].count("render_signal_chart") == 1


def test_a_french_temperature_question_gets_the_bearing_temperature_in_french(demo, ask):
    body = ask("Quelle est la température de P-02 maintenant ?")
    assert f"P-02 Bearing temperature : {latest('P-02', 'bearing_temp_c')} °C maintenant" in body["response"]
    assert "alerte 80, déclenchement 95" in body["response"]
    (chart,) = [c for c in body["tool_calls"] if c["name"] == "render_signal_chart"]
    assert len(chart["args"]["signal_def_ids"]) == 1  # the temperature asked about, not the vibration alarm


@pytest.mark.parametrize("question", ["what is the status of work order {id}?", "is WO-{id} complete?"])
def test_a_question_naming_a_work_order_is_answered_about_that_order(demo, ask, question):
    order, _ = demo
    body = ask(question.format(id=order.pk))
    assert f"WO-{order.pk} on P-02 is open, priority {order.priority}: {order.title}." in body["response"]
    assert "I do not act" not in body["response"]
    assert "find_cells" not in [c["name"] for c in body["tool_calls"]]  # WO-1 is not taken for a cell tag


@pytest.mark.parametrize(
    "question",
    [
        "please cancel WO-{id}",
        "do not cancel WO-{id}",
        "Can you close WO {id} now?",
        "annule l'ordre de travail {id}",
        "why did P-02 trip? cancel WO-{id} because it failed",
        # the state wanted, not the verb: these were answered as questions, without saying where to act
        "I want WO-{id} cancelled",
        "mark WO-{id} as done",
        "could you get WO-{id} closed today?",
        "we need work order {id} assigned to the night shift",
    ],
)
def test_a_request_to_act_on_a_work_order_changes_nothing_and_says_where_to_do_it(demo, ask, question):
    order, alarm = demo
    before = snapshot(order, alarm)
    body = ask(question.format(id=order.pk))
    assert snapshot(order, alarm) == before  # not cancelled, no event, no audit row, no investigation
    assert {c["name"] for c in body["tool_calls"]} <= READ_ONLY
    assert f"WO-{order.pk}" in body["response"] and order.title in body["response"]
    assert f"(/workorders/{order.pk}/)" in body["response"]  # where the operator does it


def test_cancel_wo_1_in_english_says_plainly_it_did_not_act(demo, ask):
    order, _ = demo
    body = ask(f"please cancel WO-{order.pk}")
    assert body["response"].startswith(f"About WO-{order.pk}: I do not act from this chat")
    assert "nothing was changed" in body["response"]
    assert f"WO-{order.pk} on P-02 is open" in body["response"]
    assert f"on WO-{order.pk}'s page (/workorders/{order.pk}/) with Cancel…" in body["response"]


@pytest.mark.parametrize("question", ["why was WO-{id} cancelled?", "is WO-{id} done?", "who has WO-{id} assigned?"])
def test_a_question_about_a_work_orders_state_is_answered_as_a_question(demo, ask, question):
    order, alarm = demo
    before = snapshot(order, alarm)
    body = ask(question.format(id=order.pk))
    assert snapshot(order, alarm) == before
    assert "I do not act" not in body["response"] and f"WO-{order.pk} on P-02 is open" in body["response"]


@pytest.mark.parametrize("question", ["WO-999", "cancel WO-999"])
def test_a_work_order_that_does_not_exist_is_said_not_to_exist(demo, ask, question):
    order, alarm = demo
    before = snapshot(order, alarm)
    body = ask(question)
    assert "There is no work order WO-999." in body["response"]
    assert "could not find data" not in body["response"]
    assert snapshot(order, alarm) == before


def test_cancel_everything_lists_the_open_orders_and_cancels_none(demo, ask):
    order, alarm = demo
    before = snapshot(order, alarm)
    body = ask("cancel everything")
    assert snapshot(order, alarm) == before
    assert f"Open work orders: WO-{order.pk} P-02 open" in body["response"]
    assert "Cancel…" in body["response"] and "nothing was changed" in body["response"]


@pytest.mark.parametrize(
    ("question", "where"),
    [
        ("acknowledge all alarms", "Control Room (/), on each alarm, with Acknowledge"),
        ("Bitte alle Alarme quittieren", "Leitstand (/) an jedem Alarm mit Acknowledge"),
        ("shelve the P-02 alarm", "Control Room (/), on each alarm, with Shelve 1 h"),
        ("I want the P-02 alarm acknowledged", "Control Room (/), on each alarm, with Acknowledge"),
    ],
)
def test_a_request_to_act_on_alarms_leaves_them_as_they_are(demo, ask, question, where):
    order, alarm = demo
    before = snapshot(order, alarm)
    body = ask(question)
    assert snapshot(order, alarm) == before  # still active_unack, no audit row
    assert {c["name"] for c in body["tool_calls"]} <= READ_ONLY | {"get_current_signals"}
    assert f"#{alarm.pk}" in body["response"] and "vibration_mm_s" in body["response"]
    assert where in body["response"]
    assert "could not find data" not in body["response"]
