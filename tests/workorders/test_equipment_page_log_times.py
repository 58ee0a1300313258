"""The equipment page on a calibration log stored with a time that is not one (a day that does
not exist, an instant past the calendar's end in UTC): the entry is shown with the text as
stored, never a 500 for the whole page."""

from __future__ import annotations

import pytest

from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("stored", ["2026-02-30T10:00:00+00:00", "9999-12-31T23:59:00-12:00"])
def test_a_log_time_that_is_not_an_instant_is_shown_as_stored(client, operator, cell, stored):
    kb = f.make_kb(cell)
    kb.calibration_log = [{"time": stored, "actor": "legacy", "changed": ["notes"], "note": "imported"}]
    kb.save(update_fields=["calibration_log"])
    client.force_login(operator)
    response = client.get(f"/equipment/{cell.pk}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert f'<time datetime="{stored}">{stored}</time>' in body
    assert "imported" in body
