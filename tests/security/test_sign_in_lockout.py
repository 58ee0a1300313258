"""The sign-in lockout (django-axes): after AXES_FAILURE_LIMIT failures the username/address pair
is locked for 15 minutes — a 429 page (or JSON for a JSON client) saying when to retry — while
other users from the same address still sign in, and a success resets the count."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client


def _sign_in(client: Client, username: str, password: str, **headers):
    return client.post("/login/", {"username": username, "password": password}, **headers)


@pytest.mark.django_db
def test_sign_in_locks_out_after_the_failure_limit_and_says_when_to_retry(operator, make_user):
    assert settings.AXES_FAILURE_LIMIT == 5
    client = Client()
    for _ in range(4):
        response = _sign_in(client, "olga", "wrong")
        assert response.status_code == 200 and b"didn't match" in response.content

    locked = _sign_in(client, "olga", "wrong")  # the fifth failure locks the pair
    assert locked.status_code == 429
    assert b"Too many failed sign-ins" in locked.content and b'id="login-submit"' in locked.content
    assert int(locked["Retry-After"]) == 15 * 60
    # Even the right password is refused while locked out: no session is created.
    refused = _sign_in(client, "olga", "pw-olga")
    assert refused.status_code == 429 and "_auth_user_id" not in client.session

    # Another user signing in from the same address is not affected.
    make_user("otto", "operator")
    other = Client()
    assert _sign_in(other, "otto", "pw-otto").status_code == 302
    assert "_auth_user_id" in other.session


@pytest.mark.django_db
def test_a_json_client_gets_a_json_lockout(operator):
    client = Client()
    for _ in range(5):
        _sign_in(client, "olga", "wrong")
    response = _sign_in(client, "olga", "wrong", HTTP_ACCEPT="application/json")
    assert response.status_code == 429
    assert response.json()["code"] == "throttled" and response.json()["retry_after"] == 15 * 60
    assert response["Retry-After"] == str(15 * 60)


@pytest.mark.django_db
def test_a_successful_sign_in_resets_the_failure_count(operator):
    client = Client()
    for _ in range(4):
        _sign_in(client, "olga", "wrong")
    assert _sign_in(client, "olga", "pw-olga").status_code == 302
    fresh = Client()
    for _ in range(4):
        assert _sign_in(fresh, "olga", "wrong").status_code == 200  # counting starts again
    assert _sign_in(fresh, "olga", "pw-olga").status_code == 302
