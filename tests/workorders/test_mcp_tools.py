"""Which capabilities the MCP server shows and how it maps results (in-process, no transport)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from core.access import APPROVER, OPERATOR
from core.capabilities import CapabilityResult, Tier, capability, registry
from workorders.mcp_server import _call, tool_result, visible_capabilities

NAMES = ("mcptest.peek", "mcptest.poke", "mcptest.launch")


class Nothing(BaseModel):
    pass


@pytest.fixture
def stand_in_caps() -> Iterator[None]:
    for name, tier in zip(NAMES, (Tier.READ, Tier.MUTATE, Tier.GATED), strict=True):
        capability(name, description=name, input=Nothing, tier=tier, tool_name=name.replace(".", "_"))(
            lambda ctx, params, _n=name: {"ran": _n, "user": ctx.user.get_username()}
        )
    yield
    for name in NAMES:
        registry.unregister(name)


def names(user) -> set[str]:
    return {cap.tool_name for cap in visible_capabilities(user)}


@pytest.mark.django_db
def test_operator_sees_read_and_mutate_never_gated(stand_in_caps, operator) -> None:
    assert {"mcptest_peek", "mcptest_poke"} <= names(operator)
    assert "mcptest_launch" not in names(operator)


@pytest.mark.django_db
def test_non_operator_sees_read_only(stand_in_caps, make_user) -> None:
    approver = make_user("ann", APPROVER)
    assert "mcptest_peek" in names(approver)
    assert not {"mcptest_poke", "mcptest_launch"} & names(approver)


@pytest.mark.django_db
def test_hidden_tools_cannot_be_called(stand_in_caps, make_user) -> None:
    approver = make_user("ann", APPROVER)

    hidden = _call(approver, "mcptest_poke", {})
    gated = _call(make_user("otto", OPERATOR), "mcptest_launch", {})
    shown = _call(approver, "mcptest_peek", {})

    assert hidden.is_error and gated.is_error and "Unknown tool" in hidden.message
    assert not shown.is_error and shown.content == {"ran": "mcptest.peek", "user": "ann"}


def test_results_map_to_mcp_content() -> None:
    ok = tool_result(CapabilityResult("x", content={"a": 1}))
    failed = tool_result(CapabilityResult("x", is_error=True, message="Invalid input: cell_id: missing"))

    assert not ok.is_error and ok.content[0].text == '{"a": 1}' and ok.structured_content == {"a": 1}
    assert failed.is_error and failed.content[0].text == "Invalid input: cell_id: missing"
