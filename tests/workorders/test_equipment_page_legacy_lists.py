"""The equipment page on a KB stored before the shape check whose list fields (a failure mode's
parts, a procedure's steps) hold a number or a boolean: the page shows the rest, never a 500."""

from __future__ import annotations

import pytest

from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "data",
    [
        {"failure_modes": {"seal_leak": {"remedy": "Replace the seal", "parts": 5}}},
        {"failure_modes": {"seal_leak": {"remedy": "Replace the seal", "parts": True}}},
        {"procedures": {"PR-1": {"title": "Replace the seal", "steps": 5}}},
        {"procedures": {"PR-1": {"title": "Replace the seal", "steps": 1.5}}},
    ],
)
def test_a_list_field_stored_as_a_number_is_left_out_not_a_500(client, operator, cell, data):
    f.make_kb(cell, data)
    client.force_login(operator)
    response = client.get(f"/equipment/{cell.pk}/")
    assert response.status_code == 200
    assert "Replace the seal" in response.content.decode()
