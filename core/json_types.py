"""Field types for request bodies that mean what their JSON Schema says.

`WholeNumber` is JSON Schema's `integer`: 7 and 7.0 are the same number there, so both are
accepted; a boolean, a string ("7") or a fraction (7.5) is refused. Pydantic's lax `int` would
take "7" and `true`, its strict `int` refuses 7.0 — neither matches the documented schema.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator


def _whole_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("Input should be a whole number")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("Input should be a whole number")
        return int(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole_number)]
