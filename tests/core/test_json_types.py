"""WholeNumber is JSON Schema's integer: 7 and 7.0 pass; booleans, strings and fractions do not."""

import pytest
from pydantic import BaseModel, ValidationError

from core.json_types import WholeNumber


class Body(BaseModel):
    qty: WholeNumber


@pytest.mark.parametrize(("raw", "value"), [(7, 7), (7.0, 7), (-3, -3)])
def test_whole_numbers_are_accepted(raw, value):
    assert Body.model_validate({"qty": raw}).qty == value


@pytest.mark.parametrize("raw", [True, False, "7", 7.5, None, [7]])
def test_anything_else_is_refused(raw):
    with pytest.raises(ValidationError):
        Body.model_validate({"qty": raw})


def test_a_bounded_optional_whole_number_states_its_bounds_in_the_schema():
    from pydantic import BaseModel

    from core.json_types import whole_number

    class Shelve(BaseModel):
        minutes: whole_number(ge=1, le=10080) | None = None  # type: ignore[valid-type]

    branch = Shelve.model_json_schema()["properties"]["minutes"]["anyOf"][0]
    assert branch == {"type": "integer", "minimum": 1, "maximum": 10080}
    assert Shelve(minutes=30.0).minutes == 30 and Shelve().minutes is None
    for bad in (0, 10081, True, "30", 1.5):
        with pytest.raises(ValueError):
            Shelve(minutes=bad)
