"""The work-order services are split by responsibility; the public names stay where they were."""

from pathlib import Path

import workorders.services as services
import workorders.services.work_orders as work_orders

SERVICES_DIR = Path(services.__file__).parent
PUBLIC = (
    "priority_for_alarm",
    "work_order_create_from_alarm",
    "active_work_order_for_alarm",
    "alarm_ids_of",
    "work_order_transition",
    "work_order_raise_priority",
    "work_order_apply_rca",
    "work_order_apply_generated",
    "failure_mode_from_rca",
    "work_order_update",
    "EDITABLE_FIELDS",
    "GENERATED_FIELDS",
    "NULLABLE_FIELDS",
)


def test_every_service_module_stays_under_400_lines():
    sizes = {p.name: len(p.read_text().splitlines()) for p in SERVICES_DIR.glob("*.py")}
    assert {name: n for name, n in sizes.items() if n >= 400} == {}


def test_public_service_names_are_importable_as_before():
    for name in PUBLIC:
        assert getattr(work_orders, name) is not None, name
    for name in services.__all__:
        assert getattr(services, name) is getattr(work_orders, name, getattr(services, name))
