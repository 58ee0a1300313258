import pytest

from core.access import APPROVER, OPERATOR
from core.models import AuditRecord
from orchestrator.models import Interaction, Plan
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"


def as_user(client, user):
    client.force_login(user)
    return client


def read_step():
    return {"capability": "otest.read_value", "inputs": {"key": "k"}}


def test_create_list_and_get_own_plan(client, operator):
    as_user(client, operator)
    created = client.post(
        f"{API}/plans",
        {"goal": "read the backlog template:none", "context_refs": ["work_order:4"]},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["status"] == "draft" and body["owner"] == "olga" and body["steps"]
    assert [p["id"] for p in client.get(f"{API}/plans").json()] == [body["id"]]
    assert client.get(f"{API}/plans/{body['id']}").json()["interactions"] == []


def test_create_needs_operator_scope(client, make_user):
    as_user(client, make_user("viewer"))
    response = client.post(f"{API}/plans", {"goal": "x"}, content_type="application/json")
    assert response.status_code == 403 and response.json()["code"] == "missing_scope"


def test_unauthenticated_is_401(client):
    assert client.get(f"{API}/plans").status_code == 401


def test_validation_errors_name_the_field(client, operator):
    as_user(client, operator)
    bad = client.post(f"{API}/plans", {"goal": "x", "autonomy": "yolo"}, content_type="application/json")
    assert bad.status_code == 422 and bad.json()["field"] == "autonomy"
    bad = client.post(f"{API}/plans", {"goal": "x", "context_refs": ["??"]}, content_type="application/json")
    assert bad.status_code == 422 and bad.json()["field"] == "context_refs.0"


def test_another_owners_plan_is_404_and_admin_bypasses(client, operator, make_user, admin_user):
    plan = build_plan(operator, [read_step()], status="draft")
    as_user(client, make_user("mallory", OPERATOR))
    for method, url in [
        ("get", f"/plans/{plan.pk}"),
        ("post", f"/plans/{plan.pk}/approve"),
        ("post", f"/plans/{plan.pk}/execute"),
        ("post", f"/plans/{plan.pk}/poll"),
        ("get", f"/plans/{plan.pk}/interactions"),
        ("patch", f"/plans/{plan.pk}"),
    ]:
        response = getattr(client, method)(API + url, {}, content_type="application/json")
        assert response.status_code == 404, (method, url)
    assert client.get(f"{API}/plans").json() == []
    as_user(client, admin_user)
    assert client.get(f"{API}/plans/{plan.pk}").status_code == 200


def test_approve_execute_and_illegal_transition_409(client, operator, django_capture_on_commit_callbacks):
    plan = build_plan(operator, [read_step()], status="draft")
    as_user(client, operator)
    early = client.post(f"{API}/plans/{plan.pk}/execute")
    assert early.status_code == 409 and early.json()["allowed"] == ["approved", "cancelled"]
    assert client.post(f"{API}/plans/{plan.pk}/approve").json()["status"] == "approved"
    again = client.post(f"{API}/plans/{plan.pk}/approve")
    assert again.status_code == 409 and again.json()["status"] == "approved"
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"{API}/plans/{plan.pk}/execute").status_code == 202
    assert client.get(f"{API}/plans/{plan.pk}").json()["status"] == "completed"


def test_patch_autonomy_is_audited_and_draft_cancel(client, operator):
    plan = build_plan(operator, [read_step()], status="draft")
    as_user(client, operator)
    body = client.patch(f"{API}/plans/{plan.pk}", {"autonomy": "ask_all"}, content_type="application/json").json()
    assert body["autonomy"] == "ask_all"
    record = AuditRecord.objects.get(action="plan.autonomy", target_id=str(plan.pk))
    assert record.details == {"from": "auto", "to": "ask_all"} and record.actor == operator
    body = client.patch(f"{API}/plans/{plan.pk}", {"status": "cancelled"}, content_type="application/json").json()
    assert body["status"] == "cancelled"
    assert AuditRecord.objects.filter(action="plan.cancelled", target_id=str(plan.pk)).exists()
    again = client.patch(f"{API}/plans/{plan.pk}", {"status": "cancelled"}, content_type="application/json")
    assert again.status_code == 409
    bad = client.patch(f"{API}/plans/{plan.pk}", {"status": "running"}, content_type="application/json")
    assert bad.status_code == 422 and bad.json()["field"] == "status"


def test_gated_answer_routes_separation_of_duties(client, operator, approver, django_capture_on_commit_callbacks):
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "x"}}]))
    ask = Interaction.objects.get(plan=plan)
    as_user(client, operator)
    assert client.get(f"{API}/needs-me").json()["count"] == 0  # the owner cannot decide it
    listed = client.get(f"{API}/plans/{plan.pk}/interactions").json()
    assert listed[0]["required_scope"] == "approver" and listed[0]["status"] == "open"
    refused = client.post(
        f"{API}/interactions/{ask.pk}/answer", {"decision": "approve"}, content_type="application/json"
    )
    assert refused.status_code == 403 and refused.json()["code"] == "separation_of_duties"
    as_user(client, approver)
    needs = client.get(f"{API}/needs-me").json()
    assert needs["count"] == 1 and needs["interactions"][0]["id"] == ask.pk
    bad = client.post(
        f"{API}/interactions/{ask.pk}/answer",
        {"decision": "approve", "inputs": {"label": 5}},
        content_type="application/json",
    )
    # a gated step is approved as asked: edited inputs are refused (37089de), the step unchanged
    assert bad.status_code == 422 and bad.json()["field"] == "inputs" and "approved as asked" in bad.json()["detail"]
    with django_capture_on_commit_callbacks(execute=True):
        ok = client.post(
            f"{API}/interactions/{ask.pk}/answer", {"decision": "approve"}, content_type="application/json"
        )
    assert ok.status_code == 200 and ok.json()["answered_by"] == "april"
    assert Plan.objects.get(pk=plan.pk).status == "completed"
    again = client.post(f"{API}/interactions/{ask.pk}/answer", {"decision": "approve"}, content_type="application/json")
    assert again.status_code == 409


def test_permission_ask_is_invisible_to_strangers(client, operator, make_user):
    plan = start(build_plan(operator, [read_step()], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    as_user(client, make_user("stranger", OPERATOR, APPROVER))
    response = client.post(
        f"{API}/interactions/{ask.pk}/answer", {"decision": "approve"}, content_type="application/json"
    )
    assert response.status_code == 404
    as_user(client, operator)
    assert client.get(f"{API}/needs-me").json()["count"] == 1


def test_poll_route_resumes_a_parked_plan(client, operator, django_capture_on_commit_callbacks):
    from tests.orchestrator import testcaps

    plan = start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "api-1"}}]))
    as_user(client, operator)
    assert client.post(f"{API}/plans/{plan.pk}/poll").json()["steps"][0]["status"] == "waiting_job"
    testcaps.finish_job("api-1")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{API}/plans/{plan.pk}/poll")
    assert client.get(f"{API}/plans/{plan.pk}").json()["status"] == "completed"


def test_list_refuses_an_unknown_status(client, operator):
    client.force_login(operator)
    response = client.get("/api/v1/aria/plans?status=bogus")
    assert response.status_code == 422 and response.json()["field"] == "status", response.content


def test_patch_refuses_unknown_fields(client, operator):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    client.force_login(operator)
    response = client.patch(f"/api/v1/aria/plans/{plan.pk}", {"autonomyy": "auto"}, content_type="application/json")
    assert response.status_code == 422 and response.json()["field"] == "autonomyy", response.content
