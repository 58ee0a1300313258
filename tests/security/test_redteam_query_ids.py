"""Every integer a query string names (`?cell_id=`, `?session_id=`, `?owner_id=`, `?line_id=`) is
bounded to the database's id range in the schema: a client sending 2**63 gets a 422 naming the
parameter, never a 500 from the database driver's overflow (red team: six list routes answered 500)."""

from __future__ import annotations

import pytest

from aria_project.api import api
from core.json_types import ROW_ID_MAX

pytestmark = pytest.mark.django_db


def _integer_query_parameters() -> list[tuple[str, str]]:
    schema = api.get_openapi_schema()
    found = []
    for path, operations in schema["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            options = parameter["schema"].get("anyOf", [parameter["schema"]])
            if parameter["in"] == "query" and any(o.get("type") == "integer" for o in options):
                found.append((path, parameter["name"]))
    return found


def test_the_schema_states_a_maximum_for_every_integer_query_parameter():
    schema = api.get_openapi_schema()
    unbounded = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                for option in parameter["schema"].get("anyOf", [parameter["schema"]]):
                    if parameter["in"] == "query" and option.get("type") == "integer":
                        if option.get("maximum", ROW_ID_MAX + 1) > ROW_ID_MAX:
                            unbounded.append(f"{method.upper()} {path} ?{parameter['name']}")
    assert unbounded == []


@pytest.mark.parametrize(("path", "name"), _integer_query_parameters())
def test_an_id_beyond_the_database_range_is_a_422_naming_the_parameter(client, operator, path, name):
    client.force_login(operator)
    url = "/".join("1" if part.startswith("{") else part for part in path.split("/"))  # a path id: any row
    response = client.get(url, {name: str(ROW_ID_MAX + 1)})
    assert response.status_code == 422, (url, response.content[:300])
    assert response.json()["field"] == name


def test_the_largest_id_is_still_a_plain_empty_answer(client, operator):
    client.force_login(operator)
    response = client.get("/api/v1/alarms", {"cell_id": str(ROW_ID_MAX)})
    assert response.status_code == 200 and response.json() == []
