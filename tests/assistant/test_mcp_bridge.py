"""A published MCP server's tools become capabilities (tier `mutate` unless the reviewed spec says
otherwise, so the plan gate asks) that call it through the MCP client.
A stdio server runs in the sandbox: the echo server's file is bound read-only into it, as an admin
lists where servers are installed (ARIA_SANDBOX_READ_ONLY_PATHS)."""

import os
import sys
from pathlib import Path

import pytest

from assistant.services.drafts import draft_approve, draft_create, draft_test, draft_validate
from assistant.services.publish import draft_publish
from core.capabilities import CapabilityContext, Tier, dispatch, project_tools, registry
from core.sandbox import isolation_status
from orchestrator.choices import gate_decision

pytestmark = pytest.mark.django_db
SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))


def stdio_spec(**extra):
    return {"transport": "stdio", "command": [sys.executable, SERVER], **extra}


def server_draft(owner, spec):
    draft = draft_validate(draft=draft_create(owner=owner, type="mcp_server", name="echo", spec=spec), actor=owner)
    assert draft.status == "validated", draft.validation_report
    return draft_test(draft=draft, actor=owner)


@pytest.fixture(autouse=True)
def _echo_server_in_the_sandbox(settings):
    status = isolation_status()
    if not status.available and os.environ.get("ARIA_REQUIRE_INTEGRATION") != "1":
        pytest.skip(f"sandbox unavailable: {status.why}")
    settings.ARIA_SANDBOX_READ_ONLY_PATHS = [SERVER]


@pytest.fixture(autouse=True)
def _forget_mcp_tools():
    yield
    for cap in registry.all():
        if cap.name.startswith("mcp."):
            registry.unregister(cap.name)


def test_published_mcp_server_tools_are_mutate_capabilities_by_default(operator, approver, make_user):
    draft = server_draft(operator, stdio_spec())
    assert draft.status == "tested", draft.test_report
    assert {t["name"] for t in draft.test_report["discovered"]} == {"shout", "add"}
    draft = draft_publish(draft=draft_approve(draft=draft, actor=approver), actor=make_user("pat", "approver"))
    assert draft.status == "published"

    cap = registry.get("shout")
    assert cap.name == "mcp.echo.shout" and cap.tier == Tier.MUTATE  # nobody said what it does: the gate asks
    assert gate_decision("ask_mutations", cap.tier) == "ask"
    assert "shout" not in {t["name"] for t in project_tools(max_tier=Tier.READ)}  # not in read-only tool lists
    assert cap.input_schema()["required"] == ["text"]
    result = dispatch("shout", {"text": "bearing"}, ctx=CapabilityContext(user=operator))
    assert not result.is_error, result.message
    assert result.content == {"result": "BEARING"}
    bad = dispatch("add", {"a": "x"}, ctx=CapabilityContext(user=operator))
    assert bad.is_error and "Invalid input" in bad.message


def test_declared_tool_not_served_fails_the_test(operator):
    draft = server_draft(operator, stdio_spec(tools=[{"name": "missing_tool", "input_schema": {"type": "object"}}]))
    assert draft.status == "test_failed"
    assert [c["reason"] for c in draft.test_report["cases"]] == ["", "not served"]


def test_unreachable_server_fails_the_test(operator):
    draft = server_draft(operator, {"transport": "stdio", "command": ["/nonexistent/mcp-server"]})
    assert draft.status == "test_failed"
    assert draft.test_report["cases"][0]["reason"] == "connection failed"


def test_server_file_not_bound_into_the_sandbox_is_not_there(operator, settings):
    settings.ARIA_SANDBOX_READ_ONLY_PATHS = []
    draft = server_draft(operator, stdio_spec())
    assert draft.status == "test_failed"
    assert draft.test_report["cases"][0]["reason"] == "connection failed"


def test_http_server_host_must_be_on_the_allowlist(operator, settings):
    spec = {"transport": "http", "url": "http://127.0.0.1:9/mcp"}
    draft = server_draft(operator, spec)
    assert draft.status == "test_failed"
    case = draft.test_report["cases"][0]
    assert case["reason"] == "host not allowed: '127.0.0.1' is not on ARIA_MCP_HTTP_ALLOWED_HOSTS"

    settings.ARIA_MCP_HTTP_ALLOWED_HOSTS = ["127.0.0.1:9"]  # allowed: it is tried (nothing listens there)
    draft = server_draft(operator, spec)
    assert draft.test_report["cases"][0]["reason"] == "connection failed"


def test_the_tier_chosen_at_review_is_the_tier_published(operator, approver, make_user):
    tools = [
        {
            "name": "shout",
            "tier": "read",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
        {"name": "add", "input_schema": {"type": "object"}},
    ]
    draft = server_draft(operator, stdio_spec(tools=tools))
    assert draft.status == "tested", draft.test_report
    draft_publish(draft=draft_approve(draft=draft, actor=approver), actor=make_user("pat", "approver"))
    assert registry.get("shout").tier == Tier.READ and gate_decision("ask_mutations", Tier.READ) == "run"
    assert registry.get("add").tier == Tier.MUTATE


@pytest.mark.parametrize("tier", ["gated", "admin", 3])
def test_an_mcp_tool_tier_outside_read_safe_mutate_is_refused(operator, tier):
    spec = stdio_spec(tools=[{"name": "shout", "tier": tier, "input_schema": {"type": "object"}}])
    draft = draft_validate(
        draft=draft_create(owner=operator, type="mcp_server", name="echo", spec=spec), actor=operator
    )
    assert draft.status == "validation_failed"
    assert "tier must be one of" in " ".join(draft.validation_report["errors"])
