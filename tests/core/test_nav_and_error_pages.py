"""The main nav shows each page only to those the page lets in, and a refused or missing page is
the site's page (layout, nav, a plain message) that names nothing internal."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

NAV = re.compile(r'<nav class="nav" aria-label="Main">(.*?)</nav>', re.S)


def _nav_links(client) -> dict[str, str]:
    """Label → href of the main nav on the Control Room."""
    nav = NAV.search(client.get("/").content.decode()).group(1)
    return {
        re.sub(r"<[^>]+>", "", label).strip(): href
        for href, label in re.findall(r'<a href="([^"]+)"[^>]*>(.*?)</a>', nav)
    }


@pytest.mark.parametrize(
    ("scopes", "shown"),
    [
        ((), {"Control Room", "Shift", "Plans", "Assistant", "API"}),
        (("approver",), {"Control Room", "Shift", "Plans", "Assistant", "Alarm performance", "Events", "API"}),
        (
            ("operator",),
            {"Control Room", "Shift", "Plans", "Assistant", "Workbench", "Alarm performance", "Events", "API"},
        ),
    ],
)
def test_every_nav_link_opens_for_whoever_sees_it(client, make_user, scopes, shown):
    client.force_login(make_user("u_" + "_".join(scopes or ("none",)), *scopes))
    links = _nav_links(client)
    assert set(links) == shown
    for label, href in links.items():
        if href.startswith("/api/"):
            continue  # the API docs link: the API answers for itself (JSON, per route)
        assert client.get(href).status_code == 200, (label, href)


def test_the_approver_is_not_offered_the_workbench_it_refuses(client, approver):
    client.force_login(approver)
    assert "Workbench" not in _nav_links(client)
    assert client.get("/assistant/workbench/").status_code == 403


def test_a_refused_page_has_the_site_layout_and_a_plain_message(client, make_user):
    client.force_login(make_user("nobody"))
    response = client.get("/alarms/performance/")
    assert response.status_code == 403
    page = response.content.decode()
    assert 'class="topbar"' in page and 'aria-label="Main"' in page and 'id="error-403"' in page
    assert "You don&#x27;t have access to this page" in page or "You don't have access to this page" in page
    assert "aria/aria.css" in page  # styled like every other page
    # Nothing internal: not the exception's text, no traceback, no settings.
    assert "Alarm performance is for operators and approvers" not in page
    assert "Traceback" not in page and "PermissionDenied" not in page


def test_a_missing_page_has_the_site_layout_and_does_not_echo_the_address(client, operator):
    client.force_login(operator)
    response = client.get("/no-such-page/<script>alert(1)</script>/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'id="error-404"' in page and "Page not found" in page and 'class="topbar"' in page
    assert "no-such-page" not in page and "<script>alert" not in page
    assert "Traceback" not in page and "urlpatterns" not in page


def test_a_missing_page_for_a_signed_out_visitor_shows_no_nav(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'id="error-404"' in page and 'aria-label="Main"' not in page


def test_the_api_still_answers_json_errors(client, make_user):
    client.force_login(make_user("nobody"))
    refused = client.get("/api/v1/alarms")
    assert refused.status_code == 403 and refused["Content-Type"].startswith("application/json")
    missing = client.get("/api/v1/no-such-route")
    assert missing.status_code == 404 and missing["Content-Type"].startswith("application/json")
