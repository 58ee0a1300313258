"""ui_render props are validated per component at publish: hostile and malformed props are refused."""

import pytest

from core.errors import InvalidInput
from core.events import publish
from core.models import Event

pytestmark = pytest.mark.django_db

BANNER = {"cell_id": 3, "severity": "trip", "message": "P-02 vibration TRIP"}


def render(component: str, props: dict):
    return publish("ui_render", {"agent": "sentinel", "component": component, "props": props})


def test_valid_props_are_published_normalised():
    event = render("alert_banner", BANNER)
    assert event.payload["props"] == {**BANNER, "anomaly_id": None}


@pytest.mark.parametrize(
    ("component", "props", "named"),
    [
        ("alert_banner", {**BANNER, "onclick": "steal()"}, "onclick"),  # extra field
        ("alert_banner", {"severity": "trip", "message": "x"}, "cell_id"),  # every card carries its cell
        ("alert_banner", {**BANNER, "severity": "apocalypse"}, "severity"),
        ("bar_chart", {"cell_id": 1, "title": "t", "labels": ["a"], "values": [1, 2]}, "same length"),
        ("kb_progress", {"cell_id": 1, "cell_tag": "P", "stage": "s", "done": 5, "total": 3}, "exceed"),
        ("work_order_card", {"cell_id": 1, "work_order": {"id": 1, "cell_id": 1, "title": "t", "status": "open"},
                             "printable": True, "print_url": "javascript:alert(1)"}, "print_url"),
        ("work_order_card", {"cell_id": 1, "work_order": {"id": 1, "cell_id": 1, "title": "t", "status": "open"},
                             "printable": True}, "print_url"),
        ("pattern_match", {"cell_id": 1, "current_pattern": {"v": {"peak": "high"}},
                           "past_failure": {"id": 1, "failure_mode": "m", "failure_time": "t"}}, "peak"),
        ("no_such_card", {"cell_id": 1}, "unknown component"),
    ],
)  # fmt: skip
def test_props_that_break_the_component_schema_are_refused_with_nothing_written(component, props, named):
    with pytest.raises(InvalidInput) as refused:
        render(component, props)
    assert refused.value.field == "props"
    assert named in refused.value.message
    assert not Event.objects.filter(type="ui_render").exists()
