"""Every plan move over the API needs the operator scope, as approve, execute and stop/skip do: an
owner whose operator scope was taken away (now approver only, or no scope) cannot still switch their
plan to run on its own, cancel it or drive its jobs.

Red team: PATCH /plans/{id} {"autonomy": "auto"} and POST /plans/{id}/poll checked only that the
caller was signed in (require_scopes with no scope), so a demoted operator set their approved plan
to 'auto' — mutations then run without asking — and it was audited as theirs.
"""

import pytest
from django.contrib.auth.models import Group

from core.access import APPROVER, OPERATOR
from core.models import AuditRecord
from orchestrator.models import Plan
from tests.orchestrator.conftest import build_plan

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("patch", "", {"autonomy": "auto"}),
        ("patch", "", {"status": "cancelled"}),
        ("post", "/poll", {}),
    ],
)
@pytest.mark.parametrize("left_with", [(APPROVER,), ()])
def test_an_owner_without_the_operator_scope_moves_nothing(client, make_user, method, path, body, left_with):
    owner = make_user("otto", OPERATOR, *left_with)
    plan = build_plan(owner, [{"capability": "otest.read_value", "inputs": {"key": "k"}}])
    owner.groups.remove(Group.objects.get(name=OPERATOR))  # demoted after drafting the plan
    client.force_login(owner)
    audited = AuditRecord.objects.count()

    response = getattr(client, method)(f"{API}/plans/{plan.pk}{path}", body, content_type="application/json")

    assert response.status_code == 403 and response.json()["code"] == "missing_scope"
    same = Plan.objects.get(pk=plan.pk)
    assert (same.autonomy, same.status) == (plan.autonomy, plan.status)
    assert AuditRecord.objects.count() == audited


def test_the_operator_still_patches_their_plan(client, operator):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}])
    client.force_login(operator)
    body = client.patch(f"{API}/plans/{plan.pk}", {"autonomy": "auto"}, content_type="application/json").json()
    assert body["autonomy"] == "auto"
