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
