"""Capability inputs are what a model, an MCP client or a plan step supplies: a flag takes only a
JSON boolean, as the API's request bodies do ("yes", "false" or 1 is a tool error naming it)."""

import typing

import pytest
from pydantic import BaseModel

from core.capabilities import CapabilityContext, dispatch, refresh_registry, registry
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


def _lax_flags(model: type[BaseModel], path: str = "") -> list[str]:
    found = []
    for name, info in model.model_fields.items():
        kinds = [info.annotation, *typing.get_args(info.annotation)]
        strict = any(getattr(m, "strict", False) for m in info.metadata)
        if bool in kinds and not strict:
            found.append(f"{path}{name}")
        for kind in kinds:
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                found += _lax_flags(kind, f"{path}{name}.")
    return found


def test_every_capability_flag_is_a_strict_boolean():
    refresh_registry(force=True)
    lax = {cap.name: flags for cap in registry.all() if (flags := _lax_flags(cap.input))}
    assert lax == {}


@pytest.mark.parametrize("value", ["yes", "false", 1])
def test_a_flag_that_is_not_a_json_boolean_is_refused_naming_it(operator, value):
    wo = f.make_work_order(f.make_cell())
    result = dispatch(
        "workorders.render_work_order_card",
        {"work_order_id": wo.pk, "printable": value},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error and "printable" in result.message


def test_a_json_boolean_flag_is_taken(operator):
    wo = f.make_work_order(f.make_cell())
    result = dispatch(
        "workorders.render_work_order_card",
        {"work_order_id": wo.pk, "printable": True},
        ctx=CapabilityContext(user=operator),
    )
    assert not result.is_error, result.message


def test_the_check_finds_a_lax_flag_nested_or_optional():
    class Inner(BaseModel):
        deep: bool = False

    class Lax(BaseModel):
        flag: bool | None = None
        inner: Inner

    assert _lax_flags(Lax) == ["flag", "inner.deep"]
