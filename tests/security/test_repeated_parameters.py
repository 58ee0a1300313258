"""A query parameter the schema takes once, given twice, is a 422 naming it (aria_project.api's
parser). ninja read the last value as if the first were never sent: CI's fuzzer (40 examples, PG)
sent GET /aria/coordinator/turns eight `conversation` values and got 200 for one of them."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/aria/coordinator/turns?conversation=a&conversation=b", "conversation"),
        ("/api/v1/alarms?severity=alert&severity=trip", "severity"),
        ("/api/v1/alarms?limit=5&state=open&limit=500", "limit"),
        ("/api/v1/workorders?cell_id=1&cell_id=1", "cell_id"),
    ],
)
def test_a_parameter_given_twice_is_a_422_naming_it(client, operator, url, field):
    client.force_login(operator)
    response = client.get(url)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field and "2 times" in response.json()["detail"]


def test_each_parameter_once_is_answered(client, operator):
    client.force_login(operator)
    assert client.get("/api/v1/aria/coordinator/turns?conversation=a").status_code == 200
    assert client.get("/api/v1/alarms?severity=alert&state=open&limit=5").status_code == 200
