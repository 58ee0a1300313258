"""Who may read /metrics (core.metrics): admin or `metrics`-group tokens and sessions, or a request
straight from ARIA_METRICS_ALLOWED_NETWORKS; everyone else 401/403 JSON."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from core.metrics import METRICS_SCOPE, check_allowed_networks
from core.tokens import api_token_create, api_token_revoke

REMOTE = "10.20.30.40"  # outside the default allowed network (127.0.0.1/32)


@pytest.fixture
def token_of(db):
    def issue(user) -> dict[str, str]:
        _, raw = api_token_create(user=user, name="prometheus")
        return {"HTTP_AUTHORIZATION": f"Bearer {raw}", "REMOTE_ADDR": REMOTE}

    return issue


@pytest.mark.django_db
def test_anonymous_from_outside_the_allowed_network_is_401_json(client):
    response = client.get("/metrics", REMOTE_ADDR=REMOTE)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db
def test_an_operator_token_is_403_even_from_an_allowed_address(client, operator, token_of):
    headers = {**token_of(operator), "REMOTE_ADDR": "127.0.0.1"}
    response = client.get("/metrics", **headers)
    assert response.status_code == 403
    assert response.json() == {"detail": "Requires scope: admin or metrics.", "code": "missing_scope"}


@pytest.mark.django_db
def test_an_unknown_or_revoked_token_is_401_even_from_an_allowed_address(client, admin_user):
    token, raw = api_token_create(user=admin_user, name="old")
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {raw}", REMOTE_ADDR=REMOTE).status_code == 200
    api_token_revoke(token=token)
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {raw}", REMOTE_ADDR="127.0.0.1").status_code == 401
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer aria_not-a-real-token", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"
    response = client.get("/metrics", HTTP_AUTHORIZATION="Basic YWRtaW46YWRtaW4=", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 401


@pytest.mark.django_db
def test_a_token_in_the_metrics_group_reads_metrics_from_anywhere(client, make_user, token_of):
    scraper = make_user("prometheus", METRICS_SCOPE)
    assert client.get("/metrics", **token_of(scraper)).status_code == 200
    scraper.is_active = False
    scraper.save()
    assert client.get("/metrics", **token_of(scraper)).status_code == 401


@pytest.mark.django_db
def test_a_signed_in_admin_may_read_it_and_a_signed_in_operator_may_not(client, admin_user, operator):
    client.force_login(operator)
    assert client.get("/metrics", REMOTE_ADDR=REMOTE).status_code == 403
    client.force_login(admin_user)
    assert client.get("/metrics", REMOTE_ADDR=REMOTE).status_code == 200


@pytest.mark.django_db
def test_the_allowed_network_reads_without_a_token(client, settings):
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200  # the default 127.0.0.1/32
    assert client.get("/metrics", REMOTE_ADDR="::ffff:127.0.0.1").status_code == 200
    settings.ARIA_METRICS_ALLOWED_NETWORKS = ["10.20.0.0/16", "fd00::/8"]
    assert client.get("/metrics", REMOTE_ADDR=REMOTE).status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="fd00::7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 401
    assert client.get("/metrics", REMOTE_ADDR="10.21.0.1").status_code == 401


# The standard and de-facto forwarding headers, and those CDNs and load balancers set instead
# (a same-host relay that sets only CF-Connecting-IP was admitted by address before).
RELAY_HEADERS = (
    "HTTP_X_FORWARDED_FOR",
    "HTTP_FORWARDED",
    "HTTP_X_REAL_IP",
    "HTTP_X_CLIENT_IP",
    "HTTP_X_CLUSTER_CLIENT_IP",
    "HTTP_TRUE_CLIENT_IP",
    "HTTP_CF_CONNECTING_IP",
    "HTTP_FASTLY_CLIENT_IP",
)


@pytest.mark.django_db
def test_a_request_relayed_by_a_proxy_is_never_admitted_by_address(client):
    # Behind a proxy on the same host every request comes from 127.0.0.1: the forwarding header
    # says it is someone else's.
    for header in RELAY_HEADERS:
        response = client.get("/metrics", REMOTE_ADDR="127.0.0.1", **{header: "203.0.113.9"})
        assert response.status_code == 401, header


@pytest.mark.django_db
def test_a_malformed_network_admits_nobody_and_check_reports_it(client, settings):
    settings.ARIA_METRICS_ALLOWED_NETWORKS = ["127.0.0.1/33", "not-a-network"]
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 401
    errors = check_allowed_networks()
    assert [e.id for e in errors] == ["aria.metrics.E001", "aria.metrics.E001"]
    assert "not-a-network" in errors[1].msg
    with pytest.raises(SystemCheckError, match=r"aria\.metrics\.E001"):
        call_command("check")


@pytest.mark.django_db
def test_only_get_is_answered(client, admin_user, token_of):
    response = client.post("/metrics", **token_of(admin_user))
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_a_token_in_the_query_string_never_admits(client, admin_user, caplog):
    """Only the Authorization header carries a token: one in the URL (which access logs and proxies
    write down) is not read, so a client that tries it is refused, not taught that it works."""
    _, raw = api_token_create(user=admin_user, name="in-url")
    for query in (f"token={raw}", f"access_token={raw}", f"authorization=Bearer%20{raw}"):
        response = client.get(f"/metrics?{query}", REMOTE_ADDR=REMOTE)
        assert (response.status_code, response.json()["code"]) == (401, "not_authenticated"), query
    assert raw not in caplog.text


@pytest.mark.django_db
def test_an_empty_or_blank_bearer_is_judged_and_refused_even_from_an_allowed_address(client):
    """An Authorization header is a claim to be someone: an empty one is refused, not waved through
    by address."""
    for header in ("Bearer", "Bearer ", "Bearer    ", "bearer \t", "Token abc"):
        response = client.get("/metrics", HTTP_AUTHORIZATION=header, REMOTE_ADDR="127.0.0.1")
        assert response.status_code == 401, repr(header)


@pytest.mark.django_db
def test_a_spoofed_forwarding_header_does_not_admit_by_address(client):
    """A client outside the allowed network naming an allowed address in a forwarding header is still
    outside: the address is the connection's, never a header's."""
    for header in ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP"):
        for value in ("127.0.0.1", "for=127.0.0.1", "127.0.0.1, 10.20.30.40"):
            response = client.get("/metrics", REMOTE_ADDR=REMOTE, **{header: value})
            assert response.status_code == 401, (header, value)
