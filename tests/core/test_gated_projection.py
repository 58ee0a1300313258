"""`gated` capabilities of the live registry are never given to a model or an MCP client.

The live registry has a real one (`sentinel.change_signal_limits`); whoever asks, at whatever tier,
it is neither in a projected tool list nor listed or callable over MCP. It runs only as a plan step.
"""

from __future__ import annotations

import pytest

from core.access import ADMIN, APPROVER, OPERATOR
from core.capabilities import Tier, project_tools, registry
from workorders.mcp_server import _call, build_server, visible_capabilities

pytestmark = pytest.mark.django_db


def gated_tool_names() -> set[str]:
    return {c.tool_name for c in registry.all() if c.tier == Tier.GATED}


@pytest.fixture
def people(make_user):
    return [
        None,
        make_user("op", OPERATOR),
        make_user("ap", APPROVER),
        make_user("both", OPERATOR, APPROVER),
        make_user("root", ADMIN),
    ]


def test_the_live_registry_has_a_gated_capability():
    cap = registry.get("sentinel.change_signal_limits")
    assert cap is not None and cap.tier == Tier.GATED and "change_signal_limits" in gated_tool_names()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_no_projection_includes_a_gated_capability(people, provider):
    gated = gated_tool_names()
    for user in people:
        for tier in Tier:
            everything = project_tools(max_tier=tier, user=user, provider=provider)
            named = project_tools(allow=[c.name for c in registry.all()], max_tier=tier, user=user, provider=provider)
            names = {t.get("name") or t["function"]["name"] for t in [*everything, *named]}
            assert not names & gated, (user, tier)


def test_mcp_neither_lists_nor_runs_a_gated_capability(people):
    gated = gated_tool_names()
    args = {"cell_tag": "P-02", "signal_key": "vibration_mm_s", "alert": 4.8, "reason": "test"}
    for user in people:
        assert not {c.tool_name for c in visible_capabilities(user)} & gated
        called = _call(user, "change_signal_limits", args)
        assert called.is_error and "Unknown tool" in called.message


def test_mcp_gives_no_input_schema_for_a_gated_capability():
    schema_for = build_server().get_tool_input_schema
    assert schema_for("change_signal_limits") is None and schema_for("sentinel.change_signal_limits") is None
    assert schema_for("find_cells") is not None
