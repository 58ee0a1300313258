"""Every API route whose path names an object is walked as someone who does not own it.

tests/security/owned_world.py finds every operation of the one NinjaAPI whose path takes an id (its
URL patterns, so a route left out of the OpenAPI schema is walked too). Each is either OWNED — the
object is one user's (a chat or authoring session and what hangs off it, a draft until it is
submitted for review, a private plan and its steps and asks, a coordinator turn or conversation, a
handover draft until signed, the author's logbook entry) — or PLANT, read and changed by role.

An owned route is called with a valid body (so the body's own checks pass) on the owner's object by
another operator, an approver, an operator-approver and a signed-in user with no scope: each gets
exactly what they get for an id that names nothing — a 404 `not_found` (or the 403 `missing_scope`
of a role they lack, which says nothing about the object) — and nothing is written: no row of ARIA's
tables changes, so no audit record, no event, no agent run (no model call). The owner's own call
then gets past the lookup (no 404): the 404s above were the ownership check, not a missing step.

A plant-wide route is the role rules: a user with no scope is refused (401/403, never the row).

A new route with an id in its path and no rule here fails `test_every_id_route_has_a_rule`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from aria_project.api import api
from assistant.models import Draft
from core.access import APPROVER, OPERATOR
from tests.security.owned_world import fill, id_routes, missing_values, owned_world, plant_world, snapshot

pytestmark = pytest.mark.django_db

Body = Callable[[dict[str, Any]], Any] | None
FILE = "multipart"


def _json(data: dict[str, Any]) -> Body:
    return lambda ids: data


# Owned routes: "METHOD template" -> the valid body it reads (None: it reads none; FILE: an upload).
OWNED: dict[str, Any] = {
    # assistant sessions and what hangs off them: the session owner's
    "GET /assistant/sessions/{session_id}": None,
    "PATCH /assistant/sessions/{session_id}": _json({"title": "mine now"}),
    "GET /assistant/sessions/{session_id}/messages": None,
    "POST /assistant/sessions/{session_id}/messages": _json({"content": "what did you tell them?"}),
    "GET /assistant/sessions/{session_id}/attachments": None,
    "POST /assistant/sessions/{session_id}/attachments": _json({"kind": "text_snippet", "name": "x", "text": "y"}),
    "POST /assistant/sessions/{session_id}/attachments/upload": FILE,
    "DELETE /assistant/attachments/{attachment_id}": None,
    "GET /assistant/runs/{run_id}": None,
    "GET /assistant/sessions/{session_id}/tool-calls": None,
    "GET /assistant/tool-calls/{call_id}": None,
    "POST /assistant/tool-calls/{call_id}/confirm": _json({}),
    "POST /assistant/tool-calls/{call_id}/reject": _json({"reason": "no"}),
    "GET /assistant/sessions/{session_id}/skills": None,
    "PUT /assistant/sessions/{session_id}/skills/{name}": _json({"state": "disabled"}),
    "GET /assistant/sessions/{session_id}/drafts": None,
    "POST /assistant/sessions/{session_id}/intent/resolve": _json({"text": "make a skill called tidy"}),
    "POST /assistant/sessions/{session_id}/plans": _json({"intent": "create_skill", "slots": {"name": "mine"}}),
    "POST /assistant/sessions/{session_id}/plans/execute": lambda ids: {
        "plan_id": ids["operation_id"],
        "confirm": True,
    },
    "GET /assistant/sessions/{session_id}/plans/latest": None,
    "GET /assistant/sessions/{session_id}/operations/{operation_id}": None,
    "GET /assistant/operations/{operation_id}": None,
    # drafts: the author's until submitted for review (tested); the world's draft is not
    "GET /assistant/drafts/{draft_id}": None,
    "PATCH /assistant/drafts/{draft_id}": _json({"name": "renamed"}),
    "DELETE /assistant/drafts/{draft_id}": None,
    "POST /assistant/drafts/{draft_id}/validate": None,
    "POST /assistant/drafts/{draft_id}/test": None,
    "POST /assistant/drafts/{draft_id}/review": None,
    "POST /assistant/drafts/{draft_id}/approve": _json({"reason": "looks fine"}),
    "POST /assistant/drafts/{draft_id}/reject": _json({"reason": "no"}),
    "POST /assistant/drafts/{draft_id}/publish": None,
    "GET /assistant/drafts/{draft_id}/reviews": None,
    # plans, their steps and asks: the plan owner's (an ask naming a scope is that scope's too)
    "GET /aria/plans/{plan_id}": None,
    "PATCH /aria/plans/{plan_id}": _json({"autonomy": "auto"}),
    "POST /aria/plans/{plan_id}/approve": None,
    "POST /aria/plans/{plan_id}/execute": None,
    "POST /aria/plans/{plan_id}/poll": None,
    "GET /aria/plans/{plan_id}/interactions": None,
    "POST /aria/plans/{plan_id}/steps/{order}/stop": _json({"reason": "mine"}),
    "POST /aria/plans/{plan_id}/steps/{order}/skip": None,
    "POST /aria/interactions/{interaction_id}/answer": _json({"decision": "approve"}),
    # coordinator turns and conversations: the user's
    "GET /aria/coordinator/turns/{turn_id}": None,
    "GET /aria/coordinator/turns/{turn_id}/explain": None,
    "GET /aria/coordinator/turns/{turn_id}/export": None,
    "GET /aria/coordinator/conversations/{conversation}/export": None,
    # a handover draft is its outgoing operator's until signed; a logbook entry is added to by its author
    "GET /workorders/shift/handovers/{handover_id}": None,
    "PATCH /workorders/shift/handovers/{handover_id}": _json({"report": "All quiet."}),
    "POST /workorders/shift/handovers/{handover_id}/sign": None,
    "POST /workorders/shift/handovers/{handover_id}/acknowledge": _json({"comment": "read"}),
    "POST /workorders/shift/logbook/{entry_id}/attachments": _json({"name": "more.txt", "text": "also"}),
}

# Plant-wide routes: the plant's record, read and changed by role ("METHOD template" -> why, and
# the valid body it reads, so a refusal is the role check's and not the body's).
COMPLETE = {
    "work_done": "Replaced the seal.", "problem_code": "PUMP.leak", "cause_code": "wear", "remedy_code": "replace",
    "rca_verdict": "confirmed", "labour_hours": 1.5,
}  # fmt: skip
PLANT: dict[str, tuple[str, Any]] = {
    "GET /alarms/{alarm_id}": ("alarms are the plant's", None),
    "POST /alarms/{alarm_id}/acknowledge": ("alarm lifecycle: operator", None),
    "POST /alarms/{alarm_id}/shelve": ("alarm lifecycle: operator", _json({"minutes": 30, "comment": "storm"})),
    "POST /alarms/{alarm_id}/unshelve": ("alarm lifecycle: operator", None),
    "POST /alarms/{alarm_id}/out-of-service": ("alarm lifecycle: operator", _json({"comment": "sensor swap"})),
    "POST /alarms/{alarm_id}/return-to-service": ("alarm lifecycle: operator", None),
    "GET /signals/{signal_id}/trends": ("signals are the plant's", None),
    "GET /workorders/{work_order_id}": ("work orders are the plant's", None),
    "POST /workorders/{work_order_id}/transition": ("work order lifecycle", _json({"to_status": "cancelled"})),
    "GET /workorders/{work_order_id}/execution": ("work execution", None),
    "GET /workorders/{work_order_id}/roster": ("work execution", None),
    "POST /workorders/{work_order_id}/assign": ("work execution", _json({"shift_assignment_id": 1})),
    "POST /workorders/{work_order_id}/start": ("work execution (the assignee: a service rule)", None),
    "POST /workorders/{work_order_id}/hold": ("work execution", _json({"reason": "waiting_parts"})),
    "POST /workorders/{work_order_id}/cancel": ("work execution", _json({"reason": "duplicate"})),
    "POST /workorders/{work_order_id}/complete": ("work execution", _json(COMPLETE)),
    "GET /workorders/kb/{cell_id}": ("the equipment KB is the plant's", None),
    "PATCH /workorders/kb/{cell_id}": ("the equipment KB: operator", _json({"patch": {"notes": "x"}})),
    "GET /workorders/shift/logbook/attachments/{attachment_id}": ("the logbook is the plant's record", None),
    "GET /workorders/evaluation/rca-runs/{run_id}": ("RCA evaluations are the plant's", None),
    "GET /assistant/prompts/{name}/versions": ("published prompts are the plant's", None),
    "PUT /assistant/prompts/{name}/aliases/{alias}": ("moving a production alias: approver", _json({"version": 1})),
    "DELETE /assistant/prompts/{name}/aliases/{alias}": ("moving a production alias: approver", None),
}


def _key(route: tuple[str, str]) -> str:
    return f"{route[0]} {route[1]}"


ROUTES = id_routes()
OWNED_ROUTES = [r for r in ROUTES if _key(r) in OWNED]
PLANT_ROUTES = [r for r in ROUTES if _key(r) in PLANT]


def test_every_id_route_has_a_rule() -> None:
    """A new route with an id in its path is owned (add it to OWNED, with its body) or plant-wide
    (PLANT, saying why); a rule for a route that is gone goes too."""
    unruled = [_key(r) for r in ROUTES if _key(r) not in OWNED and _key(r) not in PLANT]
    assert unruled == []
    assert set(OWNED) | set(PLANT) == {_key(r) for r in ROUTES}
    assert not set(OWNED) & set(PLANT)
    assert len(OWNED_ROUTES) >= 50 and len(PLANT_ROUTES) >= 20
    # the URL walk sees at least what the OpenAPI schema lists (and routes it leaves out besides)
    schema = api.get_openapi_schema()["paths"]
    listed = {f"{m.upper()} {p.removeprefix('/api/v1')}" for p, ops in schema.items() if "{" in p for m in ops}
    assert len(listed) >= 60 and listed <= {_key(r) for r in ROUTES}


def _send(client: Client, method: str, path: str, body: Any, ids: dict[str, Any]) -> Any:
    if body == FILE:
        upload = io.BytesIO(b"their notes")
        upload.name = "notes.txt"
        return client.post(path, {"file": upload})
    data = body(ids) if body is not None else None
    if data is None:
        return client.generic(method, path)
    return client.generic(method, path, json.dumps(data), content_type="application/json")


def _answer(response: Any) -> tuple[int, str, str]:
    """Status, code and detail with its numbers blanked (a message may name the id asked for)."""
    data = response.json() if response["Content-Type"].startswith("application/json") else {}
    data = data if isinstance(data, dict) else {"detail": "a list"}
    return response.status_code, data.get("code", ""), re.sub(r"\d+", "#", str(data.get("detail", "")))


@pytest.fixture
def storage(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def others(make_user) -> dict[str, Client]:
    """Signed-in clients of everyone who is not the owner (and not an admin, who bypasses)."""
    users = {
        "peer operator": make_user("bob", OPERATOR),
        "approver": make_user("abby", APPROVER),
        "operator-approver": make_user("opal", OPERATOR, APPROVER),
        "no scope": make_user("nora"),
    }
    clients = {}
    for name, user in users.items():
        clients[name] = Client()
        clients[name].force_login(user)
    return clients


@pytest.mark.parametrize("route", OWNED_ROUTES, ids=[_key(r) for r in OWNED_ROUTES])
def test_another_users_object_is_a_404_that_writes_nothing(storage, operator, others, route) -> None:
    method, template = route
    body = OWNED[_key(route)]
    ids = owned_world(operator)
    missing = {**ids, **missing_values(template)}
    before = snapshot()
    reached = []
    for who, client in others.items():
        theirs = _send(client, method, fill(template, ids), body, ids)
        nothing = _send(client, method, fill(template, missing), body, missing)

        assert _answer(theirs) == _answer(nothing), (who, theirs.content)
        assert _answer(theirs)[:2] in ((404, "not_found"), (403, "missing_scope")), (who, theirs.content)
        assert snapshot() == before, who
        reached += [who] if theirs.status_code == 404 else []
    assert reached, "nobody got past the role check: the ownership check was never reached"

    owner = Client()
    owner.force_login(operator)
    response = _send(owner, method, fill(template, ids), body, ids)
    assert response.status_code not in (404, 422) and response.status_code < 500, response.content


@pytest.mark.parametrize("route", PLANT_ROUTES, ids=[_key(r) for r in PLANT_ROUTES])
def test_a_plant_wide_route_is_refused_to_a_user_without_a_role(others, route) -> None:
    method, template = route
    values = missing_values(template)
    before = snapshot()
    response = _send(others["no scope"], method, fill(template, values), PLANT[_key(route)][1], values)
    assert (response.status_code, response.json()["code"]) in ((403, "missing_scope"), (401, "not_authenticated"))
    assert snapshot() == before


PLANT_READS = [r for r in PLANT_ROUTES if r[0] == "GET"]


@pytest.mark.parametrize("route", PLANT_READS, ids=[_key(r) for r in PLANT_READS])
def test_a_plant_wide_object_is_read_by_every_role_not_only_its_author(operator, others, route) -> None:
    """What one operator made (a logbook attachment, an evaluation they asked for, …) is the plant's:
    another operator and an operator-approver read it; a user with no scope gets a 403."""
    path = fill(route[1], plant_world(operator))
    for who in ("peer operator", "operator-approver"):
        assert others[who].get(path).status_code == 200, (who, others[who].get(path).content[:200])
    assert others["no scope"].get(path).status_code == 403


@pytest.mark.parametrize(
    ("status", "approver_reads"),
    [("draft", False), ("validated", False), ("test_failed", False), ("tested", True), ("published", True)],
)
def test_an_approver_reads_another_authors_draft_once_submitted_for_review(operator, others, status, approver_reads):
    """Before it is tested (submitted), a draft is its author's work in progress: an approver gets
    the same 404 as anyone. From `tested` on, approving it is the approvers' job. A peer operator
    never reads it. Its reviews follow the same rule, for an approver who is not an operator too
    (they approve and reject it: they read the earlier decisions); no scope at all is a 403."""
    ids = owned_world(operator)
    Draft.objects.filter(pk=ids["draft_id"]).update(status=status)
    path = fill("/assistant/drafts/{draft_id}", ids)
    expected = 200 if approver_reads else 404
    assert others["operator-approver"].get(path).status_code == expected
    assert others["operator-approver"].get(path + "/reviews").status_code == expected
    assert others["approver"].get(path + "/reviews").status_code == expected
    assert others["peer operator"].get(path).status_code == 404
    assert others["peer operator"].get(path + "/reviews").status_code == 404
    assert others["no scope"].get(path + "/reviews").status_code == 403
