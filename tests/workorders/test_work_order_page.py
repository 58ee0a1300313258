"""The work-order page: operators get the controls, approvers read, others are refused."""

from __future__ import annotations

import json
import re

import pytest

from tests.workorders.execution_helpers import analysed_order

pytestmark = pytest.mark.django_db


def page_data(response) -> dict:
    found = re.search(r'<script id="wo-page-data" type="application/json">(.*?)</script>', response.content.decode())
    return json.loads(found.group(1))


def test_operator_and_approver_see_the_page_with_their_rights(client, operator, approver, cell):
    wo = analysed_order(cell)
    client.force_login(operator)
    response = client.get(f"/workorders/{wo.pk}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert f'href="/workorders/{wo.pk}/print"' in body and 'id="wo-evidence"' in body
    data = page_data(response)
    assert data["can_operate"] is True and data["work_order"]["id"] == wo.pk
    assert data["work_order"]["rca_accuracy"]["total"] == 0
    client.force_login(approver)
    assert page_data(client.get(f"/workorders/{wo.pk}/"))["can_operate"] is False


def test_the_page_refuses_users_without_a_scope_and_unknown_orders(client, make_user, operator, cell):
    wo = analysed_order(cell)
    client.force_login(make_user("nobody"))
    response = client.get(f"/workorders/{wo.pk}/")
    assert response.status_code == 403 and b"wo-page-data" not in response.content
    client.force_login(operator)
    assert client.get("/workorders/999999/").status_code == 404
