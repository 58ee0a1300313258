"""The equipment page /equipment/<cell>/: a cell's KB read as tables for operators, refused to
others, escaped, and linked from where a user meets the cell (Control Room, work-order page)."""

from __future__ import annotations

import json
import re

import pytest

from tests.workorders import factories as f
from tests.workorders.execution_helpers import analysed_order
from workorders.services import equipment_kb_update

pytestmark = pytest.mark.django_db

HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


def page_data(response) -> dict:
    found = re.search(r'<script id="kb-page-data" type="application/json">(.*?)</script>', response.content.decode())
    assert found is not None
    return json.loads(found.group(1))


def test_an_operator_reads_the_kb_as_tables_with_the_log_and_who_changed_it(client, operator, plant):
    equipment_kb_update(
        cell=plant, patch={"equipment": {"manufacturer": "KSB AG"}}, actor=operator, note="nameplate read"
    )
    client.force_login(operator)
    response = client.get(f"/equipment/{plant.pk}/")
    assert response.status_code == 200
    body = response.content.decode()
    # equipment as rows of a table, nested objects flattened, failure modes, parts, procedures
    assert re.search(
        r'<tr data-field="equipment.manufacturer"><th scope="row">manufacturer</th><td>\s*<span class="kb-text">KSB AG</span>',
        body,
    )
    assert 'data-mode="bearing_wear"' in body and "SKF-6310-2Z-C3" in body
    assert '<tr data-ref="SKF-6310-2Z-C3">' in body
    assert '<th scope="row">remedy</th>' in body
    # the calibration log, and who changed it last with the note
    assert 'id="kb-log"' in body and "<td>olga</td>" in body and "<td>equipment</td>" in body
    assert re.search(
        r"Last updated <time [^>]+>\d{4}-\d\d-\d\d \d\d:\d\d UTC</time> by <b>olga</b>: “nameplate read”", body
    )
    data = page_data(response)
    assert data["paths"]["kb"] == f"/api/v1/workorders/kb/{plant.pk}"
    assert data["data"]["equipment"]["manufacturer"] == "KSB AG" and data["updated_at"]
    # not a raw dump of the JSON
    assert '"failure_modes"' not in body.split('id="kb-page-data"')[0]


def test_a_cell_without_a_kb_says_so(client, operator, cell):
    client.force_login(operator)
    response = client.get(f"/equipment/{cell.pk}/")
    assert response.status_code == 200
    assert "No knowledge recorded for this equipment yet." in response.content.decode()
    assert page_data(response)["updated_at"] is None


def test_sections_engineers_added_are_tables_too(client, operator, cell):
    f.make_kb(cell, {"vibration_zones_mm_s": {"good": "< 2.3", "trip": "> 7.1"}, "notes": "Runs hot in summer"})
    client.force_login(operator)
    body = client.get(f"/equipment/{cell.pk}/").content.decode()
    assert 'data-section="vibration_zones_mm_s"' in body and 'data-field="vibration_zones_mm_s.trip"' in body
    assert "&gt; 7.1" in body and "Runs hot in summer" in body


def test_markup_in_kb_values_and_the_log_is_text(client, operator, cell):
    f.make_kb(
        cell,
        {
            "equipment": {"manufacturer": HOSTILE},
            "failure_modes": {"seal_leak": {"remedy": HOSTILE, "signals": [HOSTILE]}},
            "spare_parts": [{"ref": "R-1", "name": HOSTILE, "on_hand": 1}],
            "procedures": {"PR-1": {"title": HOSTILE, "steps": [HOSTILE]}},
            "notes": HOSTILE,
        },
    )
    equipment_kb_update(cell=cell, patch={"permits": [HOSTILE]}, actor=operator, note=HOSTILE)
    client.force_login(operator)
    body = client.get(f"/equipment/{cell.pk}/").content.decode()
    assert "<img" not in body and "<script>window" not in body
    assert body.count("&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;") >= 10
    assert "\\u003Cimg" in body  # the page data carries it, escaped for a <script> element


def test_anonymous_users_are_sent_to_sign_in(client, cell):
    response = client.get(f"/equipment/{cell.pk}/")
    assert response.status_code == 302 and "/login" in response["Location"]


@pytest.mark.parametrize("scopes", [(), ("approver",)])
def test_users_without_the_operator_scope_are_refused(client, make_user, cell, scopes):
    f.make_kb(cell)
    client.force_login(make_user("visitor", *scopes))
    response = client.get(f"/equipment/{cell.pk}/")
    assert response.status_code == 403
    body = response.content.decode()
    assert "kb-page-data" not in body and "bearing_wear" not in body and 'id="kb-scope-notice"' in body


def test_an_unknown_cell_is_a_404(client, operator):
    client.force_login(operator)
    assert client.get("/equipment/999999/").status_code == 404
    assert client.post("/equipment/999999/").status_code == 405


def test_the_work_order_page_links_its_cell_for_operators(client, operator, approver, cell):
    wo = analysed_order(cell)
    client.force_login(operator)
    body = client.get(f"/workorders/{wo.pk}/").content.decode()
    assert f'<a id="wo-cell-link" href="/equipment/{cell.pk}/"' in body
    client.force_login(approver)
    assert "wo-cell-link" not in client.get(f"/workorders/{wo.pk}/").content.decode()


def test_a_kb_stored_before_the_shape_check_is_shown_not_hidden_or_a_500(client, operator, cell):
    f.make_kb(
        cell,
        {
            "equipment": "KSB pump",
            "failure_modes": {"bearing_wear": "worn", "seal_leak": {"parts": ["oops"], "remedy": 5}},
            "spare_parts": {"ref": "R-1"},
            "procedures": [{"title": "Grease"}],
            "permits": "hot work",
        },
    )
    client.force_login(operator)
    response = client.get(f"/equipment/{cell.pk}/")
    assert response.status_code == 200
    body = response.content.decode()
    for key in ("equipment", "spare_parts", "procedures", "permits"):
        assert f'data-section="{key}"' in body
    assert "KSB pump" in body and "hot work" in body and "worn" in body
    assert "{&quot;title&quot;: &quot;Grease&quot;}" in body  # an object in a list as JSON, escaped
