"""The intent workbench page: operators get the page and its data, others a notice; the nav links it."""

import json
import re

import pytest

from assistant.intents import INTENTS

pytestmark = pytest.mark.django_db


def test_an_operator_gets_the_workbench_with_its_intents_and_the_nav_link(client, operator):
    client.force_login(operator)
    response = client.get("/assistant/workbench/")
    assert response.status_code == 200
    body = response.content.decode()
    data = json.loads(re.search(r'<script id="wb-page-data" type="application/json">(.*?)</script>', body).group(1))
    assert data == {"intents": sorted(INTENTS), "api": "/api/v1/assistant", "planned_in": []}
    assert 'src="/static/assistant/workbench.js"' in body
    assert re.search(r'<a href="/assistant/workbench/" aria-current="page">Workbench</a>', body)
    assert 'href="/assistant/workbench/"' in client.get("/assistant/").content.decode()  # reachable from the nav


def test_a_user_without_the_operator_scope_gets_a_notice_and_no_script(client, approver):
    client.force_login(approver)
    response = client.get("/assistant/workbench/")
    assert response.status_code == 403
    body = response.content.decode()
    assert 'id="wb-scope-notice"' in body and "wb-page-data" not in body and "workbench.js" not in body


def test_an_anonymous_visitor_is_sent_to_the_login(client):
    response = client.get("/assistant/workbench/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_page_says_where_a_planned_operation_waits_and_only_the_owners(client, operator):
    """plans/latest answers 404 where nothing waits (a console error in the browser): the page data
    names the scopes ("" = no session) where the viewer's own planned operation waits."""
    from django.contrib.auth.models import Group, User

    from assistant.services.operations import operation_plan
    from assistant.services.sessions import session_create

    session = session_create(owner=operator, mode="build")
    operation_plan(
        owner=operator,
        intent="create_skill",
        slots={"name": "tidy_tools", "text": "Keep tools pure."},
        text="",
        session=session,
    )
    other = User.objects.create_user("otto", password="x")
    other.groups.add(Group.objects.get_or_create(name="operator")[0])

    def planned_in(user):
        client.force_login(user)
        body = client.get("/assistant/workbench/").content.decode()
        return json.loads(
            re.search(r'<script id="wb-page-data" type="application/json">(.*?)</script>', body).group(1)
        )["planned_in"]

    assert planned_in(operator) == ["", str(session.pk)]
    assert planned_in(other) == []  # another operator's planned operation is not theirs to resume
