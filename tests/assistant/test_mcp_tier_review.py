"""The approver chooses each MCP tool's tier at review (read/safe/mutate/gated; default: what the
spec declares, else mutate) through the approve route the drawer uses and the admin's approve
page; the published capability takes exactly that tier. Refused: tiers for a non-MCP draft, for a
tool the server does not have, or outside the four tiers — with nothing approved."""

import pytest

from assistant.models import Review
from core.capabilities import Tier, project_tools, registry
from orchestrator.choices import gate_decision
from tests.assistant.test_mcp_bridge import _echo_server_in_the_sandbox, server_draft, stdio_spec  # noqa: F401

from .factories import make_tested_draft

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
TOOLS = [
    {"name": "shout", "tier": "read", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "add", "input_schema": {"type": "object"}},
]


@pytest.fixture(autouse=True)
def _forget_mcp_tools():
    yield
    for cap in registry.all():
        if cap.name.startswith("mcp."):
            registry.unregister(cap.name)


def approve(client, user, draft_id, body):
    client.force_login(user)
    return client.post(f"{API}/drafts/{draft_id}/approve", body, content_type="application/json")


def test_the_tiers_the_approver_picks_are_what_the_registry_uses(client, operator, approver, make_user):
    draft = server_draft(operator, stdio_spec(tools=TOOLS))
    response = approve(client, approver, draft.pk, {"tool_tiers": {"shout": "mutate", "add": "gated"}})
    assert response.status_code == 200, response.content
    assert Review.objects.get(draft=draft).tool_tiers == {"shout": "mutate", "add": "gated"}
    client.force_login(make_user("pat", "approver"))
    assert client.post(f"{API}/drafts/{draft.pk}/publish").json()["status"] == "published"
    assert registry.get("shout").tier == Tier.MUTATE  # the author's "read" is overruled
    assert registry.get("add").tier == Tier.GATED
    assert gate_decision("full", Tier.GATED) == "ask"
    assert "add" not in {t["name"] for t in project_tools(max_tier=Tier.MUTATE)}  # never handed to a model


def test_without_a_choice_the_declared_tier_else_mutate(client, operator, approver, make_user):
    draft = server_draft(operator, stdio_spec(tools=TOOLS))
    assert approve(client, approver, draft.pk, {}).status_code == 200
    client.force_login(make_user("pat", "approver"))
    client.post(f"{API}/drafts/{draft.pk}/publish")
    assert registry.get("shout").tier == Tier.READ and registry.get("add").tier == Tier.MUTATE


@pytest.mark.parametrize(
    "tiers, message",
    [({"nope": "read"}, "not tools of this server"), ({"shout": "admin"}, "tool_tiers"), ({"shout": 3}, "tool_tiers")],
)
def test_bad_tier_choices_are_refused_and_nothing_is_approved(client, operator, approver, tiers, message):
    draft = server_draft(operator, stdio_spec(tools=TOOLS))
    response = approve(client, approver, draft.pk, {"tool_tiers": tiers})
    assert response.status_code == 422 and message in str(response.json())
    draft.refresh_from_db()
    assert draft.status == "tested" and not Review.objects.exists()


def test_tiers_for_a_draft_that_is_not_an_mcp_server_are_refused(client, operator, approver):
    draft = make_tested_draft(operator)
    response = approve(client, approver, draft.pk, {"tool_tiers": {"x": "read"}})
    assert response.status_code == 422 and response.json()["field"] == "tool_tiers"
    draft.refresh_from_db()
    assert draft.status == "tested"


def test_the_admin_approve_action_asks_for_the_tiers_then_approves_with_them(client, operator, make_user):
    draft = server_draft(operator, stdio_spec(tools=TOOLS))
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    page = client.post("/admin/assistant/draft/", {"action": "approve", "_selected_action": [draft.pk]})
    assert page.status_code == 200
    html = page.content.decode()
    assert f'name="tier:{draft.pk}:shout"' in html and f'name="tier:{draft.pk}:add"' in html
    draft.refresh_from_db()
    assert draft.status == "tested"  # nothing approved before the tiers are chosen
    body = {
        "action": "approve",
        "apply": "1",
        "_selected_action": [draft.pk],
        f"hash:{draft.pk}": draft.content_hash,
        f"tier:{draft.pk}:shout": "safe",
        f"tier:{draft.pk}:add": "mutate",
    }
    client.post("/admin/assistant/draft/", body, follow=True)
    draft.refresh_from_db()
    assert draft.status == "approved"
    assert Review.objects.get(draft=draft).tool_tiers == {"shout": "safe", "add": "mutate"}
