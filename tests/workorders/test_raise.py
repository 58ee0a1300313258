"""Raising a work order by hand (POST /api/v1/workorders, workorders.services.manual_intake): a
problem found in the field becomes an `open` order on a cell, with who raised it, audited and
announced like any other change; refused requests write nothing; an Idempotency-Key makes a double
click one order; and the order then goes assign → start → complete like an alarm's."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from core.models import AuditRecord, DispatchIntent, Event
from sentinel.models import Cell
from tests.conftest import wait_until
from tests.security.owned_world import snapshot
from tests.workorders import factories as f
from tests.workorders.execution_helpers import report
from workorders.failure_codes import seed_failure_codes
from workorders.models import FailureCode, FailureHistory, ShiftAssignment, WorkOrder, WorkOrderEvent
from workorders.services import work_order_create_from_alarm, work_order_raise

pytestmark = pytest.mark.django_db
URL = "/api/v1/workorders"


def raise_order(client, body, **headers):
    return client.post(URL, json.dumps(body), content_type="application/json", **headers)


def body(at, **overrides):
    data = {"cell": at.pk, "title": "Seal leak at the drive end", "description": "Drips every few seconds."}
    data.update(overrides)
    return data


def test_an_operator_raises_an_open_order_audited_and_announced(client, operator, cell):
    client.force_login(operator)

    response = raise_order(client, body(cell))

    assert response.status_code == 201, response.json()
    data = response.json()
    wo = WorkOrder.objects.get(pk=data["id"])
    assert (wo.status, wo.priority, wo.cell_id, wo.raised_by_id) == ("open", "medium", cell.pk, operator.pk)
    assert (wo.title, wo.description) == ("Seal leak at the drive end", "Drips every few seconds.")
    assert wo.triggered_by_alarm_id is None and wo.triggered_by_signal_def_id is None and wo.generated_by_agent == ""
    assert (data["status"], data["raised_by"]) == ("open", "olga")
    assert data["allowed_transitions"] == ["in_progress", "cancelled"]
    [created] = WorkOrderEvent.objects.filter(work_order=wo)
    assert (created.from_status, created.to_status, created.actor_id) == ("", "open", operator.pk)
    [audit] = AuditRecord.objects.filter(action="work_order.create", target_id=str(wo.pk))
    assert (audit.actor_id, audit.target_type) == (operator.pk, "work_order")
    assert audit.details == {"raised_by_hand": True, "cell_id": cell.pk, "priority": "medium", "status": "open"}
    [event] = Event.objects.filter(type="work_order_updated")
    assert json.loads(json.dumps(event.payload)) == {
        "work_order_id": wo.pk,
        "status": "open",
        "from_status": "",
        "change": "created",
        "actor": "olga",
    }
    # Nothing to investigate or generate: no agent is queued for a person's order.
    assert not DispatchIntent.objects.exists()
    listed = client.get(URL).json()["items"]
    assert [(w["id"], w["raised_by"]) for w in listed] == [(wo.pk, "olga")]


@pytest.mark.parametrize("priority", ["low", "medium", "high", "critical"])
def test_the_priority_is_one_of_the_models_choices(client, operator, cell, priority):
    client.force_login(operator)
    response = raise_order(client, body(cell, priority=priority))
    assert response.status_code == 201 and WorkOrder.objects.get().priority == priority


def test_anonymous_is_401_and_without_the_operator_scope_403_writing_nothing(client, approver, make_user, cell):
    before = snapshot()
    anonymous = raise_order(client, body(cell))
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "not_authenticated"
    for user in (approver, make_user("nobody")):
        client.force_login(user)
        refused = raise_order(client, body(cell))
        assert (refused.status_code, refused.json()["code"]) == (403, "missing_scope")
    assert snapshot() == before


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"cell": 987654}, "cell"),
        ({"cell": "1"}, "cell"),
        ({"cell": 0}, "cell"),
        ({"cell": None}, "cell"),
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "\x1e\u3000\x85"}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"title": None}, "title"),
        ({"description": "d" * 5001}, "description"),
        ({"description": 7}, "description"),
        ({"priority": "urgent"}, "priority"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_writes_nothing(client, operator, cell, overrides, field):
    client.force_login(operator)
    before = snapshot()

    response = raise_order(client, body(cell, **overrides))

    assert response.status_code == 422, response.json()
    assert response.json()["field"] == field
    assert snapshot() == before


def test_an_unknown_cell_is_named_in_words(client, operator, cell):
    client.force_login(operator)
    answer = raise_order(client, body(cell, cell=cell.pk + 1000)).json()
    assert (answer["field"], answer["code"]) == ("cell", "unknown_cell")
    assert f"no cell has id {cell.pk + 1000}" in answer["detail"]


def test_a_title_and_description_are_stored_stripped(client, operator, cell):
    client.force_login(operator)
    raise_order(client, body(cell, title="  Loose guard  ", description="\n on the coupling \n"))
    assert WorkOrder.objects.values_list("title", "description").get() == ("Loose guard", "on the coupling")


def test_html_in_the_title_is_stored_as_typed_and_escaped_on_the_pages(client, operator, cell):
    hostile = "<script>alert('wo')</script><b>Leak</b>"
    Cell.objects.filter(pk=cell.pk).update(name="<img src=x onerror=alert(1)>")
    client.force_login(operator)

    wo_id = raise_order(client, body(cell, title=hostile)).json()["id"]

    assert WorkOrder.objects.get(pk=wo_id).title == hostile
    for page in (f"/workorders/{wo_id}/", "/"):
        html = client.get(page).content.decode()
        assert "<script>alert(" not in html and "<b>Leak</b>" not in html and "<img src=x" not in html, page
    escaped = "&lt;script&gt;alert(&#x27;wo&#x27;)&lt;/script&gt;&lt;b&gt;Leak&lt;/b&gt;"
    assert escaped in client.get(f"/workorders/{wo_id}/").content.decode()
    # the Control Room's cell picker names the cell, escaped
    assert "&lt;img src=x onerror=alert(1)&gt;" in client.get("/").content.decode()


def test_the_same_idempotency_key_raises_one_order(client, operator, cell):
    client.force_login(operator)
    first = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="wo-click-1")
    before = snapshot()

    again = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="wo-click-1")

    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"] and "Idempotent-Replayed" not in first
    assert snapshot() == before  # no second order, audit record or event
    other = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="wo-click-2")
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]


def test_a_key_reused_for_other_values_is_a_409_writing_nothing(client, operator, cell):
    client.force_login(operator)
    first = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="k-1").json()
    before = snapshot()

    reused = raise_order(client, body(cell, title="Noise at the fan"), HTTP_IDEMPOTENCY_KEY="k-1")

    assert reused.status_code == 409
    assert (reused.json()["code"], reused.json()["field"]) == ("idempotency_key_reused", "Idempotency-Key")
    assert reused.json()["work_order_id"] == first["id"]
    assert snapshot() == before


def test_a_key_is_each_persons_own(client, operator, make_user, cell):
    client.force_login(operator)
    mine = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="same").json()
    client.force_login(make_user("oscar", "operator"))
    theirs = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="same")
    assert theirs.status_code == 201 and theirs.json()["id"] != mine["id"] and theirs.json()["raised_by"] == "oscar"


@pytest.mark.parametrize("key", ["", "   ", "k" * 201, "clé"])
def test_a_malformed_key_is_a_422_naming_the_header(client, operator, cell, key):
    client.force_login(operator)
    before = snapshot()
    refused = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY=key)
    assert (refused.status_code, refused.json()["field"]) == (422, "Idempotency-Key")
    assert snapshot() == before


def test_a_raised_order_is_assigned_started_and_completed_like_an_alarms(client, operator, cell):
    seed_failure_codes(FailureCode)
    f.make_kb(cell)
    client.force_login(operator)
    wo_id = raise_order(client, body(cell, priority="high")).json()["id"]
    now = timezone.now()
    shift = ShiftAssignment.objects.create(
        date=now.date(),
        shift="morning",
        line=cell.line,
        technician="Marta Silva",
        role="mechanical technician",
        skills=["mechanical"],
        starts_at=now - timedelta(hours=1),
        ends_at=now + timedelta(hours=7),
    )

    assigned = client.post(f"{URL}/{wo_id}/assign", {"shift_assignment_id": shift.pk}, content_type="application/json")
    assert assigned.status_code == 200, assigned.json()
    assert assigned.json()["assignment"]["technician"] == "Marta Silva"
    started = client.post(f"{URL}/{wo_id}/start", {"note": "LOTO done"}, content_type="application/json")
    assert started.json()["status"] == "in_progress"
    # Nothing was proposed, so there is nothing to confirm: the technician states the cause.
    confirm = client.post(f"{URL}/{wo_id}/complete", report(parts_used=[]), content_type="application/json")
    assert (confirm.status_code, confirm.json()["field"]) == (422, "rca_verdict")
    found = report(rca_verdict="corrected", actual_root_cause="Worn mechanical seal faces", parts_used=[])
    done = client.post(f"{URL}/{wo_id}/complete", found, content_type="application/json")

    assert done.status_code == 200, done.json()
    assert done.json()["status"] == "completed"
    assert [e["to_status"] for e in done.json()["events"]] == ["open", "open", "in_progress", "completed"]
    failure = FailureHistory.objects.get(work_order_id=wo_id)
    assert (failure.verification, failure.confirmed_failure_mode) == ("corrected", "bearing_wear")
    # No RCA was proposed: the order does not count against the agents' RCA accuracy.
    assert done.json()["rca_accuracy"] == {"confirmed": 0, "corrected": 0, "total": 0, "accuracy": None}


def test_an_alarm_on_the_cell_opens_its_own_order_and_does_not_join_a_persons(client, operator, cell, vibration):
    client.force_login(operator)
    mine = raise_order(client, body(cell)).json()["id"]

    from_alarm = work_order_create_from_alarm(alarm=f.make_alarm(vibration))

    assert from_alarm.pk != mine and from_alarm.status == "detected"
    assert WorkOrderEvent.objects.filter(work_order_id=mine).count() == 1


def test_the_control_room_offers_the_form_to_operators_only(client, operator, approver, cell):
    client.force_login(operator)
    page = client.get("/").content.decode()
    assert 'id="wo-new-form"' in page and f'<option value="{cell.pk}">P-02' in page
    client.force_login(approver)
    watched = client.get("/")
    assert watched.status_code == 200 and 'id="wo-new-form"' not in watched.content.decode()


def test_the_schema_documents_the_route_its_body_and_the_key_header():
    from aria_project.api import api

    operation = api.get_openapi_schema()["paths"]["/api/v1/workorders"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body["$ref"].endswith("/WorkOrderRaiseIn")
    assert {201, 409} <= {int(code) for code in operation["responses"]}
    [header] = [p for p in operation["parameters"] if p["in"] == "header"]
    assert (header["name"], header["schema"]["maxLength"]) == ("Idempotency-Key", 200)


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else a transaction reads one snapshot throughout
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_racing_requests_with_one_key_raise_one_order_on_postgresql(make_user, cell):
    """The key's pre-check cannot see an order not yet committed: the unique constraint decides, and
    each loser answers with the winner's order. The first request holds its transaction open until
    the three others wait on its row (they passed the pre-check), then commits."""
    assert connection.vendor == "postgresql"
    operator = make_user("rita", "operator")
    inserted = threading.Event()
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []

    def raise_once() -> None:
        wo, replayed = work_order_raise(cell=cell.pk, title="Leak", actor=operator, idempotency_key="race")
        results.append((wo.pk, replayed))

    def first() -> None:
        with transaction.atomic():
            raise_once()
            inserted.set()
            assert wait_until(lambda: _waiting_on_locks() >= 3), "the others never waited on the new row"

    def later() -> None:
        inserted.wait(timeout=20)
        raise_once()

    def run(call) -> None:
        try:
            call()
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in (first, later, later, later)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    [order] = WorkOrder.objects.all()
    assert sorted(results, key=lambda r: r[1]) == [(order.pk, False)] + [(order.pk, True)] * 3
    assert AuditRecord.objects.filter(action="work_order.create").count() == 1
    assert Event.objects.filter(type="work_order_updated").count() == 1


def test_the_raise_route_and_the_signals_ingest_answer_keys_alike(client, operator, cell, vibration):
    """One reading of the header (core.idempotency): the same 422 for a malformed key, the same code
    and field for a key reused with other values, and the same replay header."""
    client.force_login(operator)
    ingest_url = "/api/v1/signals/samples"

    def ingest(value, **headers):
        sample = {"signal_id": vibration.pk, "time": "2026-01-05T10:00:00+00:00", "value": value}
        return client.post(ingest_url, json.dumps({"samples": [sample]}), content_type="application/json", **headers)

    bad_order = raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="clé")
    bad_batch = ingest(1.0, HTTP_IDEMPOTENCY_KEY="clé")
    assert bad_order.status_code == bad_batch.status_code == 422
    assert bad_order.json() == bad_batch.json()
    assert bad_order.json()["code"] == "invalid_idempotency_key"

    assert raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="k").status_code == 201
    assert ingest(1.0, HTTP_IDEMPOTENCY_KEY="k").status_code == 200
    replays = [raise_order(client, body(cell), HTTP_IDEMPOTENCY_KEY="k"), ingest(1.0, HTTP_IDEMPOTENCY_KEY="k")]
    assert [r["Idempotent-Replayed"] for r in replays] == ["true", "true"]
    reused = [
        raise_order(client, body(cell, title="Other"), HTTP_IDEMPOTENCY_KEY="k"),
        ingest(2.0, HTTP_IDEMPOTENCY_KEY="k"),
    ]
    assert [(r.status_code, r.json()["code"], r.json()["field"]) for r in reused] == [
        (409, "idempotency_key_reused", "Idempotency-Key")
    ] * 2
