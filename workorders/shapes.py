"""The JSON shapes of a work order's plan lists and of the equipment KB, checked on every write.

The Control Room maps over `required_parts`, the offline agents call `.get` on each
`failure_modes` entry, the parts service reads `spare_parts[].on_hand`: a string where a list
belongs (saved through the admin or a KB PATCH) broke the page or crashed the next investigation.
So the Generator's finish tool, `work_order_update` (API capability, admin form) and
`equipment_kb_update` (API, capability, admin) all validate against the models here, and a bad
shape is a 422 naming the field (a form error in the admin) with nothing written.

Numbers are finite everywhere: JSON has no NaN or Infinity, yet Python parses `1e400` as `inf`
and `NaN` as a float, which SQLite's JSON_VALID check and PostgreSQL's jsonb both refuse (a 500).
The KB models allow extra keys (engineers add sections and notes); the keys the code reads have a
fixed shape. `kb_failure_modes` & co. are the tolerant readers for rows stored before this check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from core.errors import InvalidInput
from core.json_types import whole_number

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]


class PartRef(BaseModel):
    """A required part of a repair order: a spare-part ref of the equipment and a quantity."""

    ref: str = Field(min_length=1, max_length=64)
    qty: whole_number(ge=1, le=1000)  # type: ignore[valid-type]  # 2 or 2.0; not "2", true or 2.5


MAX_ACTIONS = 30
MAX_PARTS = 30
MAX_SKILLS = 10

# The plan lists of a work order, as the Work Order Generator submits them.
WORK_ORDER_LISTS: dict[str, TypeAdapter[Any]] = {
    "recommended_actions": TypeAdapter(Annotated[list[Text], Field(max_length=MAX_ACTIONS)]),
    "required_parts": TypeAdapter(Annotated[list[PartRef], Field(max_length=MAX_PARTS)]),
    "required_skills": TypeAdapter(Annotated[list[Name], Field(max_length=MAX_SKILLS)]),
}


class KbFailureMode(BaseModel):
    model_config = ConfigDict(extra="allow")

    signals: list[Name] = Field(default_factory=list, max_length=50)
    signatures: list[Text] = Field(default_factory=list, max_length=50)
    remedy: str = Field(default="", max_length=2000)
    procedure: str = Field(default="", max_length=64)
    parts: list[PartRef] = Field(default_factory=list, max_length=MAX_PARTS)
    skills: list[Name] = Field(default_factory=list, max_length=MAX_SKILLS)
    duration_min: int | None = Field(default=None, ge=1, le=10_000)


class KbSparePart(BaseModel):
    model_config = ConfigDict(extra="allow")

    ref: str = Field(min_length=1, max_length=64)
    name: str = Field(default="", max_length=200)
    on_hand: int = Field(default=0, ge=0, le=1_000_000)


class KbProcedure(BaseModel):
    model_config = ConfigDict(extra="allow")

    title: str = Field(default="", max_length=200)
    steps: list[Text] = Field(default_factory=list, max_length=100)


class EquipmentKbData(BaseModel):
    """The equipment KB (`EquipmentKB.data`, see `workorders/demo_kb.py`)."""

    model_config = ConfigDict(extra="allow")

    equipment: dict[str, Any] = Field(default_factory=dict)
    failure_modes: dict[Name, KbFailureMode] = Field(default_factory=dict)
    spare_parts: list[KbSparePart] = Field(default_factory=list, max_length=500)
    procedures: dict[Name, KbProcedure] = Field(default_factory=dict)
    permits: list[Text] = Field(default_factory=list, max_length=20)


def _non_finite_path(value: Any) -> str | None:
    """The dotted path of the first NaN or infinity inside `value` ('' for `value` itself)."""
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:  # iterative: no recursion whatever the nesting
        path, item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        pending.extend((f"{path}.{key}" if path else str(key), child) for key, child in children)
    return None


def _joined(prefix: str, path: str) -> str:
    return ".".join(p for p in (prefix, path) if p)


def _refusal(exc: ValidationError, prefix: str) -> InvalidInput:
    first = exc.errors()[0]
    field = _joined(prefix, ".".join(str(p) for p in first["loc"]))
    return InvalidInput(f"{field}: {first['msg']}.", field=field)


def require_finite(value: Any, field: str) -> None:
    """InvalidInput naming the first NaN or infinity inside `value` (under `field`)."""
    path = _non_finite_path(value)
    if path is not None:
        where = _joined(field, path)
        raise InvalidInput(f"{where}: numbers must be finite (no NaN or Infinity).", field=where)


def work_order_list_clean(name: str, value: Any) -> list[Any]:
    """`value` as the plan list `name` stores it (normalised), or InvalidInput naming the item."""
    require_finite(value, name)
    try:
        cleaned = WORK_ORDER_LISTS[name].validate_python(value)
    except ValidationError as exc:
        raise _refusal(exc, name) from None
    return [item.model_dump() if isinstance(item, BaseModel) else item for item in cleaned]


def kb_data_check(data: dict[str, Any], *, keys: Iterable[str] | None = None, prefix: str = "data") -> None:
    """InvalidInput unless the KB's sections `keys` (default: all) have their shape.

    Only the sections a patch touches are checked, so a row stored before this check (with a bad
    section elsewhere) can still be patched, and the error always names a field of the patch."""
    sections = {key: data[key] for key in (data if keys is None else keys) if key in data}
    require_finite(sections, prefix)
    try:
        EquipmentKbData.model_validate(sections)
    except ValidationError as exc:
        raise _refusal(exc, prefix) from None
    seen: set[str] = set()
    for index, part in enumerate(sections.get("spare_parts") or []):
        if part["ref"] in seen:  # one stock per part: completions take from it, shortages read it
            where = _joined(prefix, f"spare_parts.{index}.ref")
            raise InvalidInput(f"{where}: {part['ref']!r} is listed twice; give its stock in one row.", field=where)
        seen.add(part["ref"])


# --- tolerant readers: rows stored before the check may hold anything ----------------------------


def kb_failure_modes(kb: Any) -> dict[str, dict[str, Any]]:
    """mode → its entry, skipping entries that are not objects (and a non-object section)."""
    modes = kb.get("failure_modes") if isinstance(kb, dict) else None
    if not isinstance(modes, dict):
        return {}
    return {str(mode): info for mode, info in modes.items() if isinstance(info, dict)}


def kb_list_of_str(info: dict[str, Any], key: str) -> list[str]:
    """A list-of-strings field of a KB entry (signals, signatures, skills), bad items skipped."""
    value = info.get(key)
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def kb_text(info: dict[str, Any], key: str) -> str:
    value = info.get(key)
    return value if isinstance(value, str) else ""


def kb_section(kb: Any, key: str) -> dict[str, Any]:
    """An object section of the KB (`procedures`, `equipment`), or {} when it is not one."""
    value = kb.get(key) if isinstance(kb, dict) else None
    return value if isinstance(value, dict) else {}


def kb_objects(value: Any) -> list[dict[str, Any]]:
    """The object items of a list section (`spare_parts`), others skipped."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def kb_parts(value: Any) -> list[dict[str, Any]]:
    """A failure mode's `parts` as valid {ref, qty} items, others skipped."""
    parts = []
    for item in kb_objects(value):
        try:
            parts.append(PartRef.model_validate(item).model_dump())
        except ValidationError:
            continue
    return parts
