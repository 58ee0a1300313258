"""Page furniture every page shares: the favicon."""

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_pages_link_the_svg_favicon_and_favicon_ico_redirects_to_it(client, operator):
    assert finders.find("aria/favicon.svg")
    client.force_login(operator)
    page = client.get("/events/").content.decode()
    assert 'rel="icon" href="/static/aria/favicon.svg" type="image/svg+xml"' in page
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"] == "/static/aria/favicon.svg"
    client.logout()
    assert "aria/favicon.svg" in client.get("/login/").content.decode()  # signed out too
