"""Field types for request bodies that mean what their JSON Schema says.

`WholeNumber` is JSON Schema's `integer`: 7 and 7.0 are the same number there, so both are
accepted; a boolean, a string ("7") or a fraction (7.5) is refused. Pydantic's lax `int` would
take "7" and `true`, its strict `int` refuses 7.0 — neither matches the documented schema.
"""

from __future__ import annotations

from typing import Annotated, Any

import annotated_types
from pydantic import BeforeValidator, Field


def _whole_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("Input should be a whole number")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("Input should be a whole number")
        return int(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole_number)]

ROW_ID_MAX = 2**63 - 1
# A row id a query names (`?cell_id=`): PostgreSQL's bigint / SQLite's INTEGER range, stated in the
# schema, so 2**63 is a 422 naming the parameter rather than an overflow in the database driver.
RowId = Annotated[int, annotated_types.Ge(1), annotated_types.Le(ROW_ID_MAX)]


def whole_number(*, ge: int | None = None, le: int | None = None) -> Any:
    """A bounded `WholeNumber` that states its bounds in the schema also where it is optional
    (`whole_number(ge=1) | None`): bounds put on an Optional field's `Field()` would not reach the
    integer's schema, so clients and fuzzers would not know them."""
    bounds = [
        *([annotated_types.Ge(ge)] if ge is not None else []),
        *([annotated_types.Le(le)] if le is not None else []),
    ]
    return Annotated[int, *bounds, BeforeValidator(_whole_number)]


# A text with something left after Python's str.strip(): one character that is not whitespace to
# str.isspace(). Spelled out rather than `\s`, which means other characters in JSON Schema's ECMA-262
# patterns (no U+001C-U+001F or U+0085) than in Python's `re`. Stated on the schema of a text the
# server strips and refuses when blank (a plan's goal), so a schema-valid text is never refused as blank.
NOT_BLANK = r"[^\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def not_blank_text(max_length: int, **field: Any) -> Any:
    """A required text field the server strips and refuses when blank: at least one character, at
    most `max_length`, and NOT_BLANK in its schema (`field`: Field's other arguments)."""
    return Field(min_length=1, max_length=max_length, json_schema_extra={"pattern": NOT_BLANK}, **field)


# For other ECMA-262 patterns (no `\s`, and no `$`: both mean other things in Python's `re`): one
# character str.strip() removes, and the end of the text.
STRIPPED_CHAR = "[" + NOT_BLANK.removeprefix("[^")
TEXT_END = r"(?![\s\S])"


def json_schema_when(condition: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema's if/then: when every property in `condition` is present and matches, `then`
    applies (e.g. a hold for reason "other" needs a note): a rule a body's shape carries, stated so
    a client checking the schema knows it."""
    return {"if": {"properties": condition, "required": list(condition)}, "then": then}


# A row id a JSON body names (`{"session_id": 7}`): JSON Schema's integer (7.0 too, not "7" or true)
# within the database's id range, stated in the schema as `RowId` states it for a query.
BodyRowId = Annotated[RowId, BeforeValidator(_whole_number)]
