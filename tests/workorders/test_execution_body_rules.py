"""Cancelling and completing a started order: what the service refuses for its shape — a blank
cancel reason, a blank work_done, a corrected RCA without the actual root cause — the schema says
(NOT_BLANK patterns, if rca_verdict is "corrected" then actual_root_cause), so the schema's verdict on
a body and the server's answer agree. Unknown failure codes or parts depend on the data; these
bodies use known ones."""

from __future__ import annotations

import json

import pytest

from tests.openapi_bodies import schema_accepts
from tests.workorders.execution_helpers import analysed_order, report, shift_covering
from workorders.services.execution import work_order_assign, work_order_start

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"


def _started(cell, operator):
    order = analysed_order(cell)
    work_order_assign(work_order=order, shift_assignment=shift_covering(order), actor=operator)
    work_order_start(work_order=order, actor=operator)
    return order


def _agree(client, operator, order, action: str, body: dict, done: str) -> None:
    client.force_login(operator)
    valid_by_schema = schema_accepts(f"/api/v1/workorders/{{work_order_id}}/{action}", body)
    response = client.post(f"{BASE}/{order.pk}/{action}", json.dumps(body), content_type="application/json")
    assert response.status_code in (200, 422), response.content
    assert (response.status_code == 200) == valid_by_schema, (body, response.json())
    order.refresh_from_db()
    assert order.status == (done if valid_by_schema else "in_progress")


@pytest.mark.parametrize("reason", ["motor swapped under another order", "", " ", "\t\u3000\x1d", "\u200b", "x" * 501])
def test_the_schema_calls_a_cancel_valid_exactly_when_the_server_cancels(client, operator, cell, reason):
    _agree(client, operator, _started(cell, operator), "cancel", {"reason": reason}, "cancelled")


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"work_done": " \n"},  # blank: min_length 1 let it through the schema
        {"work_done": "\u2028"},
        {"rca_verdict": "corrected", "actual_root_cause": "DE bearing outer race spalled; grease dried out."},
        {"rca_verdict": "corrected", "actual_root_cause": ""},  # the schema called it valid
        {"rca_verdict": "corrected", "actual_root_cause": "  \u00a0"},
        {"rca_verdict": "corrected", "actual_root_cause": None},  # left out
        {"rca_verdict": "confirmed", "actual_root_cause": "   "},  # only a corrected RCA needs one
    ],
)
def test_the_schema_calls_a_completion_valid_exactly_when_the_server_completes(client, operator, cell, changes):
    body = {key: value for key, value in report(**changes).items() if value is not None}
    _agree(client, operator, _started(cell, operator), "complete", body, "completed")
