"""A person moving a work order to analyzed records the root cause; the Generator then runs as after an
agent's RCA. Without a root cause the move is refused (422 naming rca_summary), for the API, the
capability and the admin alike."""

import json

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.models import AuditRecord, Event
from tests.workorders import factories as f
from workorders.models import FailureHistory

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"


@pytest.fixture
def api(client, operator):
    client.force_login(operator)
    return client


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_api_move_to_analyzed_without_a_root_cause_is_422_naming_rca_summary(api, cell):
    wo = f.make_work_order(cell)
    for body in ({"to_status": "analyzed"}, {"to_status": "analyzed", "rca_summary": "   "}):
        response = post(api, f"{BASE}/{wo.pk}/transition", body)
        assert response.status_code == 422, response.json()
        assert response.json()["field"] == "rca_summary"
    wo.refresh_from_db()
    assert (wo.status, wo.rca_summary) == ("detected", "")
    assert not wo.events.exists() and not FailureHistory.objects.filter(work_order=wo).exists()


def test_api_manual_rca_moves_to_analyzed_and_queues_the_generator_like_an_agent_rca(
    api, plant, django_capture_on_commit_callbacks
):
    wo = f.make_work_order(plant)
    before = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
    body = {"to_status": "analyzed", "rca_summary": "bearing_wear: DE bearing worn (walkdown)", "note": "walkdown"}
    with django_capture_on_commit_callbacks(execute=True):
        response = post(api, f"{BASE}/{wo.pk}/transition", body)
    assert response.status_code == 200, response.json()
    wo.refresh_from_db()
    # The Generator ran on commit (fake engine) and wrote the repair order from the person's RCA.
    assert wo.status == "open" and wo.generated_by_agent == "work_order_generator"
    assert (wo.rca_summary, wo.confidence) == ("bearing_wear: DE bearing worn (walkdown)", 1.0)
    assert wo.rca_details["recorded_by"] == "olga" and wo.rca_details["failure_mode"] == "bearing_wear"
    assert [p["ref"] for p in wo.required_parts] == ["SKF-6310-2Z-C3", "GREASE-LGHP2"]
    assert list(wo.events.values_list("to_status", "actor__username")) == [("analyzed", "olga"), ("open", "system")]
    assert FailureHistory.objects.get(work_order=wo).failure_mode == "bearing_wear"
    types = list(Event.objects.filter(id__gt=before).order_by("id").values_list("type", flat=True))
    assert types.index("rca_ready") < types.index("agent_start") < types.index("work_order_ready")
    assert AuditRecord.objects.filter(action="work_order.transition", actor_label="olga").count() == 1


def test_rca_summary_goes_only_with_a_move_to_analyzed(api, cell):
    wo = f.make_work_order(cell)
    response = post(api, f"{BASE}/{wo.pk}/transition", {"to_status": "cancelled", "rca_summary": "x"})
    assert response.status_code == 422 and response.json()["field"] == "rca_summary"
    illegal = post(api, f"{BASE}/{f.make_work_order(cell, status='open').pk}/transition", {"to_status": "analyzed"})
    assert illegal.status_code == 409 and illegal.json()["allowed"] == ["in_progress", "cancelled"]


def test_capability_move_to_analyzed_needs_rca_summary(plant, operator):
    wo = f.make_work_order(plant)
    ctx = CapabilityContext(user=operator)
    refused = dispatch("workorders.update_work_order", {"work_order_id": wo.pk, "to_status": "analyzed"}, ctx=ctx)
    assert refused.is_error and "rca_summary" in refused.message
    done = dispatch(
        "workorders.update_work_order",
        {
            "work_order_id": wo.pk,
            "to_status": "analyzed",
            "rca_summary": "seal_leak: drips at the gland",
            "confidence": 0.6,
        },
        ctx=ctx,
    )
    assert not done.is_error, done.message
    wo.refresh_from_db()
    assert (wo.status, wo.confidence, wo.rca_details["failure_mode"]) == ("analyzed", 0.6, "seal_leak")


@pytest.fixture
def staff(client, admin_user):
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    return client


def _form_data(response) -> dict:
    form = response.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if k in form.fields and v is not None}
    for name in ("required_parts", "required_skills", "recommended_actions"):
        data[name] = json.dumps(data.get(name) or [])
    data.update({"events-TOTAL_FORMS": 0, "events-INITIAL_FORMS": 0})
    return data


def test_admin_records_a_root_cause_on_a_detected_order_through_the_same_service(
    staff, plant, django_capture_on_commit_callbacks
):
    wo = f.make_work_order(plant)
    url = f"/admin/workorders/workorder/{wo.pk}/change/"
    page = staff.get(url)
    assert "rca_summary" in page.context["adminform"].form.fields
    data = _form_data(page) | {"rca_summary": "bearing_wear: confirmed by vibration analysis"}
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(url, data)
    assert response.status_code == 302
    wo.refresh_from_db()
    assert wo.status == "open" and wo.rca_summary == "bearing_wear: confirmed by vibration analysis"
    assert wo.events.first().actor.username == "adam"
    # Past detected, the root cause is read-only again.
    assert "rca_summary" not in staff.get(url).context["adminform"].form.fields
