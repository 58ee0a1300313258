"""A coordinator conversation's name is a slug: it is a path segment of the export route, the export's
file name and a filter key. "../../etc" or markup is a 422 naming `conversation` at the API, a tool
error through the capability, and refused by the service for any other caller; no turn is stored."""

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import CoordinatorTurn

pytestmark = pytest.mark.django_db
TURNS = "/api/v1/aria/coordinator/turns"
HOSTILE = ["../../etc", "a/b", "<script>x</script>", "..", "", " default", "line 2", "x" * 81, 'a"; filename=b']


@pytest.mark.parametrize("name", HOSTILE)
def test_the_api_refuses_a_hostile_conversation_name(client, operator, name):
    client.force_login(operator)
    response = client.post(TURNS, {"message": "What happened?", "conversation": name}, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["field"] == "conversation"
    assert not CoordinatorTurn.objects.exists()


@pytest.mark.parametrize("name", ["../../etc", "<b>x</b>", ""])
def test_the_service_and_the_capability_refuse_it_too(operator, name):
    with pytest.raises(InvalidInput) as refused:
        coordinator_turn(user=operator, message="What happened?", conversation=name)
    assert refused.value.field == "conversation"
    result = dispatch(
        "orchestrator.coordinate",
        {"message": "What happened?", "conversation": name},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error and "conversation" in result.message
    assert not CoordinatorTurn.objects.exists()


def test_slug_names_still_work_and_export(client, operator):
    client.force_login(operator)
    for name in ("default", "line-2", "session-7", "Night_shift"):
        response = client.post(
            TURNS, {"message": "What happened?", "conversation": name}, content_type="application/json"
        )
        assert response.status_code == 201, response.content
        assert response.json()["conversation"] == name
    export = client.get("/api/v1/aria/coordinator/conversations/line-2/export")
    assert export.status_code == 200 and export.json()["conversation"] == "line-2"
    assert client.get("/api/v1/aria/coordinator/conversations/%3Cb%3E/export").status_code == 422


@pytest.mark.parametrize("name", [n for n in HOSTILE if n != ""] + ["_p"])
def test_listing_turns_by_a_name_no_conversation_can_have_is_a_422(client, operator, name):
    """The list's filter states the names' rule as the export's path does (it took any string and
    answered []); the fuzzer's `?conversation=_p` was accepted while the schema said nothing."""
    client.force_login(operator)
    response = client.get(TURNS, {"conversation": name})
    assert response.status_code == 422 and response.json()["field"] == "conversation"
    assert client.get(TURNS, {"conversation": "ops-1"}).status_code == 200
