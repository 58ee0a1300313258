import pytest
from django.contrib.auth.models import User

from orchestrator.models import Interaction
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db


def staff(user: User) -> User:
    user.is_staff = True
    user.is_superuser = True
    user.save()
    return User.objects.get(pk=user.pk)


def test_admin_lists_plans_with_inline_steps_and_interactions(client, operator, admin_user):
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "a"}}]))
    client.force_login(staff(admin_user))
    page = client.get(f"/admin/orchestrator/plan/{plan.pk}/change/")
    assert page.status_code == 200 and b"otest.release" in page.content
    assert client.get("/admin/orchestrator/interaction/").status_code == 200


def test_admin_approve_action_keeps_separation_of_duties(client, make_user, django_capture_on_commit_callbacks):
    owner = staff(make_user("boss"))  # a superuser who owns the plan
    plan = start(build_plan(owner, [{"capability": "otest.release", "inputs": {"label": "b"}}]))
    ask = Interaction.objects.get(plan=plan)
    client.force_login(owner)
    url = "/admin/orchestrator/interaction/"
    client.post(url, {"action": "approve", "_selected_action": [ask.pk]}, follow=True)
    ask.refresh_from_db()
    assert ask.status == "open" and testcaps.CALLS == []  # the owner was refused, even as superuser

    other = staff(make_user("auditor"))
    client.force_login(other)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "approve", "_selected_action": [ask.pk]}, follow=True)
    ask.refresh_from_db()
    assert ask.status == "answered" and ask.answered_by == other and testcaps.CALLS == ["release"]


def test_a_staff_approver_without_model_permissions_sees_plans_and_interactions(client, make_user):
    from core.access import APPROVER

    client.force_login(make_user("ann", APPROVER, is_staff=True))
    for path in ("/admin/orchestrator/plan/", "/admin/orchestrator/interaction/"):
        assert client.get(path).status_code == 200, path
