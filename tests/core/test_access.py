import pytest

from core.access import has_scopes, user_scopes


@pytest.mark.django_db
def test_scopes_come_from_groups_and_admin_holds_all(operator, admin_user):
    assert user_scopes(operator) == {"operator"}
    assert user_scopes(admin_user) == {"operator", "approver", "admin"}
    assert has_scopes(operator, ["operator"])
    assert not has_scopes(operator, ["approver"])
    # An unknown scope name denies rather than passing silently.
    assert not has_scopes(admin_user, ["nonexistent"])


@pytest.mark.django_db
def test_me_requires_auth_and_reports_scopes(client, operator):
    assert client.get("/api/v1/me").status_code == 401
    client.force_login(operator)
    body = client.get("/api/v1/me").json()
    assert body["username"] == "olga"
    assert body["scopes"] == ["operator"]
    assert body["is_service_account"] is False
