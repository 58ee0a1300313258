"""The JSON shapes of a work order's plan lists and of the equipment KB (workorders/shapes.py) hold
on every route that writes them — the edit service, the admin forms, the KB PATCH API — and the
offline Investigator reads a malformed KB stored before the check without crashing."""

import json

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import EquipmentKB
from workorders.offline.kb import answer_from_kb
from workorders.services import equipment_kb_update, work_order_update
from workorders.tasks import generate_task, investigate_task

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"
INF = float("inf")


@pytest.fixture
def staff(client, approver):
    approver.is_staff = True
    approver.is_superuser = True
    approver.save()
    client.force_login(approver)
    return client


# --- work-order plan lists ---------------------------------------------------------------------

BAD_LISTS = [
    ({"required_parts": "str"}, "required_parts"),
    ({"required_parts": {"a": 1}}, "required_parts"),
    ({"required_parts": [1, 2, 3]}, "required_parts.0"),
    ({"required_parts": [{"ref": INF, "qty": 1}]}, "required_parts.0.ref"),
    ({"required_parts": [{"ref": "SKF-6310", "qty": INF}]}, "required_parts.0.qty"),
    ({"required_parts": [{"ref": "SKF-6310", "qty": float("nan")}]}, "required_parts.0.qty"),
    ({"required_parts": [{"ref": "SKF-6310", "qty": 0}]}, "required_parts.0.qty"),
    ({"required_parts": [{"ref": "SKF-6310", "qty": "2"}]}, "required_parts.0.qty"),
    ({"required_parts": [{"qty": 1}]}, "required_parts.0.ref"),
    ({"recommended_actions": "Replace the bearing"}, "recommended_actions"),
    ({"recommended_actions": ["ok", {"step": 2}]}, "recommended_actions.1"),
    ({"recommended_actions": ["  "]}, "recommended_actions.0"),
    ({"required_skills": ["mechanical", 7]}, "required_skills.1"),
    ({"required_skills": ["s"] * 11}, "required_skills"),
]


@pytest.mark.parametrize(("changes", "field"), BAD_LISTS)
def test_the_edit_service_refuses_a_wrong_shape_naming_the_item(cell, approver, changes, field):
    wo = f.make_work_order(cell, required_parts=[{"ref": "OLD", "qty": 1}])
    with pytest.raises(InvalidInput) as refused:
        work_order_update(work_order=wo, actor=approver, changes={"title": "New", **changes})
    assert refused.value.field == field
    wo.refresh_from_db()
    assert (wo.title, wo.required_parts) == ("Test order", [{"ref": "OLD", "qty": 1}])  # nothing written
    assert not AuditRecord.objects.filter(action="work_order.update").exists()


def test_the_edit_service_stores_the_normalised_shape(cell, approver):
    wo = f.make_work_order(cell)
    changes = {
        "required_parts": [{"ref": "SKF-6310-2Z-C3", "qty": 2.0, "note": "ignored"}],
        "recommended_actions": ["  Lock out (LOTO)  ", "Replace the bearing"],
        "required_skills": ["mechanical"],
    }
    work_order_update(work_order=wo, actor=approver, changes=changes)
    wo.refresh_from_db()
    assert wo.required_parts == [{"ref": "SKF-6310-2Z-C3", "qty": 2}]
    assert wo.recommended_actions == ["Lock out (LOTO)", "Replace the bearing"]
    assert wo.required_skills == ["mechanical"]


def test_the_update_capability_answers_the_shape_error(cell, operator):
    wo = f.make_work_order(cell)
    result = dispatch(
        "workorders.update_work_order",
        {"work_order_id": wo.pk, "recommended_actions": ["x" * 1001]},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error and "recommended_actions" in result.message
    wo.refresh_from_db()
    assert wo.recommended_actions == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("required_parts", '"str"'),
        ("required_parts", '{"a": 1}'),
        ("required_parts", "[1, 2, 3]"),
        ("required_parts", '[{"ref": 1e400}]'),
        ("required_parts", '[{"ref": "A", "qty": 1e400}]'),
        ("recommended_actions", '"Replace it"'),
        ("required_skills", '[{"skill": "mechanical"}]'),
    ],
)
def test_the_admin_form_refuses_a_wrong_shape_with_a_form_error(staff, cell, field, value):
    wo = f.make_work_order(cell, required_parts=[{"ref": "OLD", "qty": 1}])
    url = f"/admin/workorders/workorder/{wo.pk}/change/"
    response = staff.post(url, f.work_order_change_form(wo, **{field: value, "title": "Edited"}))
    assert response.status_code == 200  # the form again, no 302 and no 500
    assert field in response.context["adminform"].form.errors
    wo.refresh_from_db()
    assert (wo.title, wo.required_parts) == ("Test order", [{"ref": "OLD", "qty": 1}])
    assert not AuditRecord.objects.filter(action="work_order.update").exists()


def test_the_admin_form_saves_a_good_shape(staff, cell):
    wo = f.make_work_order(cell)
    url = f"/admin/workorders/workorder/{wo.pk}/change/"
    good = f.work_order_change_form(
        wo, required_parts='[{"ref": "SKF-6310-2Z-C3", "qty": 1}]', required_skills='["mechanical"]'
    )
    response = staff.post(url, good)
    assert response.status_code == 302, response.context["adminform"].form.errors
    wo.refresh_from_db()
    assert (wo.required_parts, wo.required_skills) == ([{"ref": "SKF-6310-2Z-C3", "qty": 1}], ["mechanical"])


# --- equipment KB ------------------------------------------------------------------------------


def _patch(client, cell, body: str):
    return client.patch(f"{BASE}/kb/{cell.pk}", body, content_type="application/json")


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ('{"failure_modes": "garbage"}', "patch.failure_modes"),
        ('{"failure_modes": {"bearing_wear": "garbage"}}', "patch.failure_modes.bearing_wear"),
        ('{"failure_modes": {"bearing_wear": {"signals": "vibration"}}}', "patch.failure_modes.bearing_wear.signals"),
        ('{"failure_modes": {"x": {"parts": [{"ref": "A", "qty": 1e400}]}}}', "patch.failure_modes.x.parts.0.qty"),
        ('{"failure_modes": {"x": {"duration_min": NaN}}}', "patch.failure_modes.x.duration_min"),
        ('{"spare_parts": [{"name": "no ref"}]}', "patch.spare_parts.0.ref"),
        ('{"spare_parts": [{"ref": "A", "on_hand": -1}]}', "patch.spare_parts.0.on_hand"),
        # One stock per part: with two rows of a ref, parts used were checked against the last row's
        # count and taken from both, so a completion failed on 'patch.spare_parts.0.on_hand'.
        (
            '{"spare_parts": [{"ref": "A", "on_hand": 1}, {"ref": "B"}, {"ref": "A", "on_hand": 5}]}',
            "patch.spare_parts.2.ref",
        ),
        ('{"procedures": {"PR-1": {"steps": "one step"}}}', "patch.procedures.PR-1.steps"),
        ('{"permits": "LOTO"}', "patch.permits"),
        ('{"equipment": {"rated_power_kw": 1e400}}', "patch.equipment.rated_power_kw"),
        ('{"notes": {"deep": [1, Infinity]}}', "patch.notes.deep.1"),
    ],
)
def test_the_kb_patch_api_refuses_a_wrong_shape_naming_the_field(client, operator, plant, patch, field):
    client.force_login(operator)
    before = EquipmentKB.objects.get(cell=plant)
    response = _patch(client, plant, f'{{"patch": {patch}}}')
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    after = EquipmentKB.objects.get(cell=plant)
    assert (after.data, after.calibration_log) == (before.data, before.calibration_log)
    assert not AuditRecord.objects.filter(action="equipment_kb.update").exists()


def test_the_kb_patch_api_keeps_free_sections_and_repairs_an_old_malformed_row(client, operator, cell):
    f.make_kb(cell, {"failure_modes": "garbage", "spare_parts": "x"})  # stored before the check
    client.force_login(operator)
    mode = {"signals": ["vibration_mm_s"], "remedy": "Replace the bearing.", "parts": [{"ref": "A", "qty": 1}]}
    fixed = _patch(client, cell, json.dumps({"patch": {"failure_modes": {"bearing_wear": mode}, "notes": "ok"}}))
    assert fixed.status_code == 200, fixed.content
    data = EquipmentKB.objects.get(cell=cell).data
    assert data["failure_modes"] == {"bearing_wear": mode} and data["notes"] == "ok"
    assert data["spare_parts"] == "x"  # untouched sections are not re-checked


def test_an_internal_kb_write_is_checked_too(cell, operator):
    with pytest.raises(InvalidInput) as refused:
        equipment_kb_update(cell=cell, patch={"spare_parts": [{"ref": "A", "on_hand": "many"}]}, actor=operator)
    assert refused.value.field == "patch.spare_parts.0.on_hand"
    assert not EquipmentKB.objects.filter(cell=cell).exists()  # the row get_or_create made is rolled back


@pytest.mark.parametrize(
    "data", ['{"failure_modes": "garbage"}', "[1, 2]", '{"spare_parts": [{"ref": "A", "on_hand": 1e400}]}']
)
def test_the_kb_admin_form_refuses_a_wrong_shape(staff, cell, data):
    kb = f.make_kb(cell, {"a": 1})
    response = staff.post(f"/admin/workorders/equipmentkb/{kb.pk}/change/", {"cell": cell.pk, "data": data})
    assert response.status_code == 200
    assert "data" in response.context["adminform"].form.errors
    assert EquipmentKB.objects.get(pk=kb.pk).data == {"a": 1}


# --- the offline Investigator reads a malformed stored KB --------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"failure_modes": "garbage"},
        {"failure_modes": {"bearing_wear": "garbage", "cavitation": {"signals": 5, "signatures": "x", "remedy": 3}}},
        ["not", "an", "object"],
    ],
)
def test_the_investigator_skips_malformed_kb_entries(plant, vibration, data):
    EquipmentKB.objects.filter(cell=plant).update(data=data)  # a row stored before the check
    alarm = f.make_alarm(vibration, value=5.0)
    wo = f.make_work_order(
        plant, triggered_by_alarm=alarm, triggered_by_signal_def=vibration, trigger_anomaly_time=alarm.raised_at
    )
    investigate_task(wo.pk)
    wo.refresh_from_db()
    assert wo.status != "detected"
    assert wo.rca_details["fallback"] is False, wo.rca_summary
    assert "(error:" not in wo.rca_summary and "AttributeError" not in wo.rca_summary
    generate_task(wo.pk)  # the offline Generator reads the same KB
    wo.refresh_from_db()
    assert wo.status == "open" and wo.recommended_actions and wo.generated_by_agent


@pytest.mark.parametrize(
    "kb",
    [
        {"failure_modes": {"bearing_wear": {"parts": [{"ref": {}}, 3], "signatures": 5, "procedure": []}}},
        {"failure_modes": "garbage", "spare_parts": [{"ref": "A"}, "x", {"name": "no ref"}]},
        "not an object",
    ],
)
def test_the_offline_kb_answer_reads_a_malformed_kb(kb):
    for question in ("What about bearing wear?", "Which spare parts?", "failure modes?"):
        answer = answer_from_kb(kb, question, "P-02")
        assert isinstance(answer["answer"], str) and answer["source"]
