"""seed_demo gives the approver the Django permissions the admin (the approval console) needs."""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

CHANGELISTS = [
    "/admin/workorders/workorder/",
    "/admin/sentinel/alarm/",
    "/admin/core/auditrecord/",
    "/admin/core/agentrun/",
    "/admin/core/event/",
    "/admin/sentinel/cell/",
    "/admin/workorders/failurehistory/",
]


@pytest.fixture
def seeded_approver(db, tmp_path, settings):
    settings.VAR_DIR = tmp_path
    call_command("seed_demo", "--users-only", credentials_file=tmp_path / "creds.txt")
    call_command("seed_demo", "--users-only", credentials_file=tmp_path / "creds.txt")  # idempotent
    return User.objects.get(username="approver")


@pytest.mark.parametrize("url", CHANGELISTS)
def test_approver_sees_the_aria_changelists(client, seeded_approver, url):
    client.force_login(seeded_approver)
    assert client.get(url).status_code == 200


def test_approver_views_but_never_changes_adds_or_deletes_records(seeded_approver):
    """Moving alarms and work orders needs the operator scope, in the admin as over the API."""
    for perm in (
        "workorders.change_workorder",
        "sentinel.change_alarm",
        "core.add_auditrecord",
        "core.delete_auditrecord",
        "core.change_auditrecord",
        "core.add_event",
        "core.delete_agentrun",
        "core.add_apitoken",
        "workorders.delete_workorder",
    ):
        assert not seeded_approver.has_perm(perm), perm


def test_read_only_admin_pages_stay_forbidden_for_writes(client, seeded_approver):
    client.force_login(seeded_approver)
    assert client.get("/admin/core/auditrecord/add/").status_code == 403
    assert client.get("/admin/core/apitoken/add/").status_code == 403
    assert client.get("/admin/auth/user/").status_code == 403
