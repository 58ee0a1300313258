"""A confirm card approves the change it showed (red team): a card proposed before its work order
was cancelled, or before someone else changed the field it shows, is not run on confirm — it
expires with what moved, and the order is untouched. A closed order's record is not edited at all."""

import pytest

pytest.importorskip("workorders.capabilities")

from assistant.models import PendingToolCall
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from core.agents.engines.fake import FakeEngine, FakeReply
from core.errors import Conflict
from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import WorkOrder
from workorders.services.edits import work_order_update
from workorders.services.lifecycle import work_order_transition

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


@pytest.fixture
def order():
    return f.make_work_order(f.make_cell("P-02"), status="open", priority="medium", title="P-02 bearing")


def _held_card(operator, order) -> int:
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("update_work_order", {"work_order_id": order.pk, "priority": "high"})]),
            FakeReply(tool_calls=[("submit_turn", {"reply": "Proposed; confirm to run it."})]),
        ]
    )
    session = session_create(owner=operator, mode="build")
    outcome = session_turn(
        session=session, user=operator, content=f"set the priority of work order {order.pk} to high", engine=engine
    )
    return outcome.pending_calls[0]["id"]


def test_a_card_whose_before_no_longer_holds_expires_on_confirm_and_runs_nothing(client, operator, order):
    call_id = _held_card(operator, order)
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
    call_id = _held_card(operator, order)
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
    call_id = _held_card(operator, order)
    client.force_login(operator)
    response = client.post(f"{API}/tool-calls/{call_id}/confirm", {}, content_type="application/json")
    assert response.status_code == 200 and response.json()["status"] == "done"
    order.refresh_from_db()
    assert order.priority == "high"
