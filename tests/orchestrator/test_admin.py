import pytest
from django.contrib.auth.models import User

from core.access import APPROVER
from orchestrator.models import Interaction, Plan
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
    client.force_login(make_user("ann", APPROVER, is_staff=True))
    for path in ("/admin/orchestrator/plan/", "/admin/orchestrator/interaction/"):
        assert client.get(path).status_code == 200, path


def test_only_an_admin_cancels_another_users_plan_from_the_console(client, make_user, operator):
    """Red team: a staff approver cancelled an operator's plan with the admin action, which the API
    refuses them. The action is an admin's (like the API, where plans are their owner's)."""
    plan = build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "c"}}])
    url = "/admin/orchestrator/plan/"

    client.force_login(make_user("ann", APPROVER, is_staff=True))
    assert b"cancel_plans" not in client.get(url).content  # not offered
    client.post(url, {"action": "cancel_plans", "_selected_action": [plan.pk]}, follow=True)
    assert Plan.objects.get(pk=plan.pk).status == plan.status

    client.force_login(staff(make_user("root")))
    assert b"cancel_plans" in client.get(url).content
    client.post(url, {"action": "cancel_plans", "_selected_action": [plan.pk]}, follow=True)
    assert Plan.objects.get(pk=plan.pk).status == "cancelled"
