"""Build mode "ask, then run": under tool_approval=ask a mutating call the model proposes is held
(stored as proposed), shown with what it will change, and runs only when the session's owner
confirms — through capability dispatch with their scopes — once. Hostile cases: a client that
sends altered arguments, another user (an admin too), a second confirm, confirm after reject."""

import pytest

pytest.importorskip("workorders.capabilities")

from assistant.models import Message, PendingToolCall
from assistant.services.sessions import session_create, session_history
from assistant.services.turns import session_turn
from core.agents.engines.fake import FakeEngine, FakeReply
from core.errors import Conflict
from core.models import AgentRun, AgentStep, AuditRecord, Event
from tests.workorders import factories as f
from workorders.models import WorkOrder
from workorders.services.edits import work_order_update
from workorders.services.lifecycle import work_order_transition

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


@pytest.fixture
def order():
    return f.make_work_order(f.make_cell("P-02"), status="open", priority="medium", title="P-02 bearing")


def proposing(order_id: int, priority: str = "high") -> FakeEngine:
    return FakeEngine(
        script=[
            FakeReply(tool_calls=[("update_work_order", {"work_order_id": order_id, "priority": priority})]),
            FakeReply(tool_calls=[("submit_turn", {"reply": "Proposed; confirm to run it."})]),
        ]
    )


def held_turn(operator, order, content="set the priority of work order {id} to high", engine=None):
    session = session_create(owner=operator, mode="build")
    outcome = session_turn(
        session=session, user=operator, content=content.format(id=order.pk), engine=engine or proposing(order.pk)
    )
    return session, outcome


def test_the_proposed_call_is_held_with_what_it_will_change(operator, order):
    _session, outcome = held_turn(operator, order)
    order.refresh_from_db()
    assert order.priority == "medium"  # nothing ran
    [card] = outcome.pending_calls
    assert card["tool"] == "update_work_order" and card["tier"] == "mutate" and card["status"] == "pending"
    assert card["args"] == {"work_order_id": order.pk, "priority": "high"}
    assert card["changes"] == [{"field": "priority", "before": "medium", "after": "high"}]
    step = AgentStep.objects.get(tool="update_work_order", kind="held")
    assert "awaiting confirmation" in step.result_summary and not step.is_error
    assert outcome.message.metadata["pending_calls"] == [card["id"]]


def test_the_offline_engine_proposes_the_change_the_user_asks_for_and_never_runs_it(operator, order):
    """The wording a user types, through the default (offline) engine: held, not run."""
    _session, outcome = held_turn(operator, order, engine=FakeEngine())
    order.refresh_from_db()
    assert order.priority == "medium"
    assert [c["args"] for c in outcome.pending_calls] == [{"work_order_id": order.pk, "priority": "high"}]
    assert "Confirm" in outcome.reply and outcome.message.metadata["offline"] is True


def test_a_session_set_to_allow_runs_the_offline_proposal_never(operator, order):
    session = session_create(owner=operator, mode="build")
    session.metadata["tool_approval"] = "allow"
    session.save()
    session_turn(session=session, user=operator, content=f"set the priority of work order {order.pk} to high")
    order.refresh_from_db()
    assert order.priority == "medium" and not PendingToolCall.objects.exists()


def test_confirm_runs_the_stored_call_once_with_an_audit_row_and_tells_the_model(client, operator, order):
    session, outcome = held_turn(operator, order)
    call_id = outcome.pending_calls[0]["id"]
    client.force_login(operator)
    url = f"{API}/tool-calls/{call_id}/confirm"

    # a client that sends arguments back (altered) is refused, and nothing runs
    altered = client.post(url, {"args": {"work_order_id": order.pk, "priority": "critical"}}, "application/json")
    assert altered.status_code == 422
    order.refresh_from_db()
    assert order.priority == "medium" and PendingToolCall.objects.get(pk=call_id).status == "pending"

    done = client.post(url, {}, "application/json")
    assert done.status_code == 200, done.content
    assert done.json()["status"] == "done"
    order.refresh_from_db()
    assert order.priority == "high"  # the stored arguments ran
    audit = AuditRecord.objects.get(action="assistant.tool_call.confirm")
    assert audit.details["args"] == {"work_order_id": order.pk, "priority": "high"}
    assert audit.actor_id == operator.pk
    assert AgentStep.objects.filter(kind="confirmed", tool="update_work_order", is_error=False).count() == 1
    event = Event.objects.get(type="tool_call_decided")  # other tabs update the card
    assert event.payload == {"owner_id": operator.pk, "call_id": call_id, "session_id": session.pk, "status": "done"}
    assert client.get(f"{API}/tool-calls/{call_id}").json()["status"] == "done"

    # twice: the recorded outcome, not a second run
    order.priority = "low"
    order.save()
    again = client.post(url, {}, "application/json")
    assert again.status_code == 200 and again.json()["status"] == "done"
    order.refresh_from_db()
    assert order.priority == "low"
    assert AuditRecord.objects.filter(action="assistant.tool_call.confirm").count() == 1
    assert client.post(f"{API}/tool-calls/{call_id}/reject", {}, "application/json").status_code == 409

    history = session_history(session)
    assert "confirmed update_work_order" in history[-1]["content"] and history[-1]["role"] == "user"


def test_another_user_and_an_admin_cannot_see_or_decide_the_call(client, operator, make_user, admin_user, order):
    session, outcome = held_turn(operator, order)
    call_id = outcome.pending_calls[0]["id"]
    for intruder in (make_user("mallory", "operator"), admin_user):
        client.force_login(intruder)
        assert client.post(f"{API}/tool-calls/{call_id}/confirm", {}, "application/json").status_code == 404
        assert client.post(f"{API}/tool-calls/{call_id}/reject", {}, "application/json").status_code == 404
        assert client.get(f"{API}/tool-calls/{call_id}").status_code == 404
    client.force_login(make_user("mallory2", "operator"))
    assert client.get(f"{API}/sessions/{session.pk}/tool-calls").status_code == 404
    order.refresh_from_db()
    assert order.priority == "medium" and PendingToolCall.objects.get(pk=call_id).status == "pending"


def test_reject_runs_nothing_and_the_model_reads_that_it_was_declined(client, operator, order):
    session, outcome = held_turn(operator, order)
    call_id = outcome.pending_calls[0]["id"]
    client.force_login(operator)
    response = client.post(f"{API}/tool-calls/{call_id}/reject", {"reason": "wrong order"}, "application/json")
    assert response.status_code == 200 and response.json()["status"] == "rejected"
    order.refresh_from_db()
    assert order.priority == "medium"
    assert AuditRecord.objects.filter(action="assistant.tool_call.reject").count() == 1
    assert client.post(f"{API}/tool-calls/{call_id}/confirm", {}, "application/json").status_code == 409
    note = Message.objects.get(session=session, role="system")
    assert "declined update_work_order" in note.content and "wrong order" in note.content

    seen = []

    def engine_reads_history(state):
        seen.append(state.request.messages)
        return FakeReply(tool_calls=[("submit_turn", {"reply": "ok"})])

    session_turn(
        session=session,
        user=operator,
        content="why not?",
        engine=FakeEngine(policies={"authoring_assistant": engine_reads_history}),
    )
    told = " ".join(m["content"] for m in seen[0] if isinstance(m["content"], str))
    assert "declined update_work_order" in told


def test_confirm_runs_with_the_users_scopes_and_the_services_checks(client, operator, order):
    """The same checks as the human route: an illegal transition is refused by the service."""
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("update_work_order", {"work_order_id": order.pk, "to_status": "detected"})]),
            FakeReply(tool_calls=[("submit_turn", {"reply": "Proposed."})]),
        ]
    )
    _session, outcome = held_turn(operator, order, content="reopen work order {id}", engine=engine)
    client.force_login(operator)
    body = client.post(f"{API}/tool-calls/{outcome.pending_calls[0]['id']}/confirm", {}, "application/json").json()
    assert body["status"] == "failed" and body["error"]
    order.refresh_from_db()
    assert order.status == "open"


def test_a_call_with_bad_input_is_an_error_to_the_model_not_a_card(operator, order):
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("update_work_order", {"work_order_id": order.pk, "priority": "whenever"})]),
            FakeReply(tool_calls=[("submit_turn", {"reply": "Sorry."})]),
        ]
    )
    _session, outcome = held_turn(operator, order, engine=engine)
    assert outcome.pending_calls == [] and not PendingToolCall.objects.exists()
    step = AgentStep.objects.get(tool="update_work_order")
    assert step.is_error and step.kind == "tool" and "priority" in step.error


def test_every_agent_run_of_the_session_records_its_correlation_id(operator, order):
    session, outcome = held_turn(operator, order)
    run = AgentRun.objects.get(pk=outcome.run.agent_run_id)
    assert run.correlation_id == session.correlation_id
    details = outcome.message.metadata
    assert details["correlation_id"] == session.correlation_id
    assert [r["id"] for r in details["agent_runs"]] == [run.pk] and details["offline"] is True


def test_the_watchdog_expires_old_proposals_and_closes_calls_whose_process_died(client, operator, order):
    from datetime import timedelta

    from django.utils import timezone

    from assistant.tasks import expire_stale_runs_task

    _session, first = held_turn(operator, order)
    _session, second = held_turn(operator, order)
    old, lost = (PendingToolCall.objects.get(pk=o.pending_calls[0]["id"]) for o in (first, second))
    PendingToolCall.objects.filter(pk=old.pk).update(created=timezone.now() - timedelta(hours=3))
    PendingToolCall.objects.filter(pk=lost.pk).update(status="running", decided_at=timezone.now() - timedelta(hours=1))

    assert expire_stale_runs_task() >= 2
    old.refresh_from_db()
    lost.refresh_from_db()
    assert old.status == "expired" and lost.status == "failed" and "interrupted" in lost.error
    client.force_login(operator)
    assert client.post(f"{API}/tool-calls/{old.pk}/confirm", {}, "application/json").status_code == 409
    order.refresh_from_db()
    assert order.priority == "medium"  # neither ran


def test_a_proposal_past_its_ttl_is_refused_at_confirm(client, operator, order):
    from datetime import timedelta

    from django.utils import timezone

    _session, outcome = held_turn(operator, order)
    call_id = outcome.pending_calls[0]["id"]
    PendingToolCall.objects.filter(pk=call_id).update(created=timezone.now() - timedelta(hours=3))
    client.force_login(operator)
    response = client.post(f"{API}/tool-calls/{call_id}/confirm", {}, "application/json")
    assert response.status_code == 409 and "expired" in response.json()["detail"]
    order.refresh_from_db()
    assert order.priority == "medium" and PendingToolCall.objects.get(pk=call_id).status == "expired"


def test_the_admin_lists_held_calls_read_only(client, operator, order, make_user):
    held_turn(operator, order)
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    page = client.get("/admin/assistant/pendingtoolcall/")
    assert page.status_code == 200 and "update_work_order" in page.content.decode()
    call = PendingToolCall.objects.get()
    assert client.post(f"/admin/assistant/pendingtoolcall/{call.pk}/change/", {"status": "done"}).status_code == 403
    call.refresh_from_db()
    assert call.status == "pending"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_confirms_run_the_call_once_on_postgresql(operator):
    import threading

    from django.db import connection

    from assistant.services.tool_calls import tool_call_confirm

    assert connection.vendor == "postgresql"
    order = f.make_work_order(f.make_cell("P-09"), status="open", priority="medium", title="race")
    _session, outcome = held_turn(operator, order)
    call_id = outcome.pending_calls[0]["id"]
    barrier, results = threading.Barrier(4), []

    def confirm() -> None:
        try:
            barrier.wait(timeout=10)
            results.append(tool_call_confirm(user=operator, call_id=call_id).status)
        finally:
            connection.close()

    threads = [threading.Thread(target=confirm) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 4 and set(results) <= {"running", "done"}
    assert AuditRecord.objects.filter(action="assistant.tool_call.confirm").count() == 1
    assert AgentStep.objects.filter(kind="confirmed").count() == 1


@pytest.mark.usefixtures("steady_registry")
def test_listing_a_sessions_held_calls_takes_the_same_queries_for_1_or_5(client, operator, order):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(session) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"{API}/sessions/{session.pk}/tool-calls").status_code == 200
        return len(queries)

    one, _ = held_turn(operator, order)
    five = session_create(owner=operator, mode="build")
    for _ in range(5):
        session_turn(session=five, user=operator, content="x", engine=proposing(order.pk))
    client.force_login(operator)
    assert PendingToolCall.objects.filter(session=five).count() == 5
    count(one)  # the first request after sign-in also touches the login session
    assert count(one) == count(five)


# --- a card approves the change it showed (red team) ---------------------------------------------------
# A card proposed before its work order was cancelled, or before someone else changed the field it
# shows, is not run on confirm: it expires with what moved. A closed order's record is not edited.


def test_a_card_whose_before_no_longer_holds_expires_on_confirm_and_runs_nothing(client, operator, order):
    call_id = held_turn(operator, order)[1].pending_calls[0]["id"]
    WorkOrder.objects.filter(pk=order.pk).update(priority="low")  # someone else changed it meanwhile

    client.force_login(operator)
    response = client.post(f"{API}/tool-calls/{call_id}/confirm", {}, content_type="application/json")
    assert response.status_code == 409, response.content
    assert "priority was 'medium' on the card, now 'low'" in response.json()["detail"]
    order.refresh_from_db()
    assert order.priority == "low"
    call = PendingToolCall.objects.get(pk=call_id)
    assert call.status == "expired" and "Nothing was run" in call.error
    assert not AuditRecord.objects.filter(action="work_order.update").exists()


def test_a_card_confirmed_after_its_order_was_cancelled_changes_nothing(client, operator, order):
    call_id = held_turn(operator, order)[1].pending_calls[0]["id"]
    work_order_transition(work_order=order, to_status="cancelled", actor=operator, note="not needed")

    client.force_login(operator)
    response = client.post(f"{API}/tool-calls/{call_id}/confirm", {}, content_type="application/json")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "failed", body
    assert "cancelled" in body["error"]
    order.refresh_from_db()
    assert (order.status, order.priority) == ("cancelled", "medium")


@pytest.mark.parametrize("closed", ["cancelled", "completed"])
def test_a_closed_orders_record_is_not_edited(operator, closed):
    order = f.make_work_order(f.make_cell("P-03"), status=closed, priority="medium", title="done")
    with pytest.raises(Conflict) as refused:
        work_order_update(work_order=order, actor=operator, changes={"priority": "high"})
    assert refused.value.status_code == 409 and refused.value.as_body()["allowed"] == []
    order.refresh_from_db()
    assert order.priority == "medium"


def test_the_card_still_runs_when_nothing_moved(client, operator, order):
    call_id = held_turn(operator, order)[1].pending_calls[0]["id"]
    client.force_login(operator)
    response = client.post(f"{API}/tool-calls/{call_id}/confirm", {}, content_type="application/json")
    assert response.status_code == 200 and response.json()["status"] == "done"
    order.refresh_from_db()
    assert order.priority == "high"
