"""Capabilities that take an owned object's id, dispatched as someone who does not own it.

The same registry feeds the chat and coordinator tools, plan steps and the MCP endpoint (/mcp), so
an id a model or an MCP client passes is a body id too. Every capability whose input names an
owner-scoped object (OWNED_FIELDS) is dispatched on the operator's objects (tests/security/owned_world.py)
as a peer operator and as an operator-approver: the result is exactly the result for an id naming
nothing, and no row of ARIA's tables changes. A new capability taking such an id without a row in
ARGS fails `test_every_capability_taking_an_owned_id_is_walked`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from core.access import APPROVER, OPERATOR
from core.capabilities import CapabilityContext, dispatch, registry
from tests.security.owned_world import MISSING_INT, MISSING_STR, owned_world, snapshot

pytestmark = pytest.mark.django_db

# Input fields that name an object one user owns (tests/security/test_every_owned_route.py's OWNED).
OWNED_FIELDS = {
    "session_id", "draft_id", "run_id", "call_id", "operation_id", "plan_id", "interaction_id",
    "turn_id", "conversation", "handover_id", "entry_id", "attachment_id",
}  # fmt: skip

# capability -> its arguments; a value "{x}" is the owner's object x (or an id naming nothing).
ARGS: dict[str, dict[str, Any]] = {
    "assistant.get_draft": {"draft_id": "{draft_id}"},
    "assistant.get_draft_review": {"draft_id": "{draft_id}"},
    "assistant.decide_draft": {"draft_id": "{draft_id}", "decision": "approve", "reason": "fine"},
    "orchestrator.read_drafts": {"draft_id": "{draft_id}"},
    "orchestrator.get_plan": {"plan_id": "{plan_id}"},
    "orchestrator.list_approvals": {"plan_id": "{plan_id}"},
    "orchestrator.list_conversation_events": {"conversation": "{conversation}"},
}

# Capabilities whose owned-looking field names the caller's own things only (name -> why).
CALLERS_OWN = {
    "orchestrator.coordinate": "a conversation name is within the caller's own turns: the turn it writes is theirs",
}


def _taking_owned_ids() -> list[str]:
    return sorted(cap.name for cap in registry.all() if OWNED_FIELDS & set(cap.input.model_fields))


def test_every_capability_taking_an_owned_id_is_walked() -> None:
    assert _taking_owned_ids() == sorted([*ARGS, *CALLERS_OWN])


def _args(template: dict[str, Any], ids: dict[str, Any]) -> dict[str, Any]:
    return {k: ids[v[1:-1]] if isinstance(v, str) and v.startswith("{") else v for k, v in template.items()}


def _outcome(result: Any) -> tuple[bool, str]:
    """Whether it failed, and what it said (numbers blanked: a message may name the id asked for)."""
    said = result.message if result.is_error else json.dumps(result.content, sort_keys=True, default=str)
    return result.is_error, re.sub(r"\d+", "#", said)


@pytest.mark.parametrize("name", sorted(ARGS))
def test_another_users_id_is_the_same_answer_as_no_object(operator, make_user, name) -> None:
    ids = owned_world(operator)
    missing = {k: MISSING_STR if isinstance(v, str) else MISSING_INT for k, v in ids.items()}
    peers = [make_user("bob", OPERATOR), make_user("opal", OPERATOR, APPROVER)]
    before = snapshot()
    for peer in peers:
        theirs = dispatch(name, _args(ARGS[name], ids), ctx=CapabilityContext(user=peer))
        nothing = dispatch(name, _args(ARGS[name], missing), ctx=CapabilityContext(user=peer))

        assert _outcome(theirs) == _outcome(nothing), (peer.username, theirs)
        assert snapshot() == before, peer.username
    # the owner reaches them: the answers above were the scoping, not a wrong argument
    assert not dispatch(name, _args(ARGS[name], ids), ctx=CapabilityContext(user=operator)).message.endswith(
        "not found."
    )
