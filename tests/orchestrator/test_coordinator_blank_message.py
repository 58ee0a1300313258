"""A coordinator turn needs words: a blank message ("   ", tabs, only \\x1c-\\x1f separators) is a 422
naming `message` at the API, a tool error through the capability, and refused by the service for
any other caller, as a plan's blank goal is; no turn and no agent run is stored."""

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.models import AgentRun
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import CoordinatorTurn

pytestmark = pytest.mark.django_db
TURNS = "/api/v1/aria/coordinator/turns"
BLANKS = ["   ", "\t\n", "\x1f\x1c", "\u00a0\u2003"]


def _nothing_written() -> None:
    assert not CoordinatorTurn.objects.exists()
    assert not AgentRun.objects.exists()


@pytest.mark.parametrize("message", BLANKS)
def test_the_api_refuses_a_blank_message_naming_it(client, operator, message):
    client.force_login(operator)
    response = client.post(TURNS, {"message": message}, content_type="application/json")
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "message"
    assert response.json()["detail"] == "message: say what you need (it may not be blank)."
    _nothing_written()


@pytest.mark.parametrize("message", BLANKS)
def test_the_service_and_the_capability_refuse_it_too(operator, message):
    with pytest.raises(InvalidInput) as refused:
        coordinator_turn(user=operator, message=message)
    assert refused.value.field == "message"
    result = dispatch("orchestrator.coordinate", {"message": message}, ctx=CapabilityContext(user=operator))
    assert result.is_error and "message" in result.message
    _nothing_written()


def test_a_message_with_words_is_still_a_turn(client, operator):
    client.force_login(operator)
    response = client.post(TURNS, {"message": "  What happened on P-02?  "}, content_type="application/json")
    assert response.status_code == 201, response.content
    assert CoordinatorTurn.objects.count() == 1
