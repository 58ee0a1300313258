"""Every work-order write, by responsibility; this module keeps the names importable from one place.

- `alarm_intake`: creation from alarms (a repeat alarm joins the signal's active order).
- `lifecycle`: the one transition service, closing side effects, priority raises.
- `agent_results`: the Investigator's RCA and the Generator's repair order.
- `edits`: plan-field edits by people and agents.
"""

from workorders.services.agent_results import failure_mode_from_rca, work_order_apply_generated, work_order_apply_rca
from workorders.services.alarm_intake import (
    active_work_order_for_alarm,
    priority_for_alarm,
    work_order_create_from_alarm,
)
from workorders.services.edits import EDITABLE_FIELDS, GENERATED_FIELDS, NULLABLE_FIELDS, work_order_update
from workorders.services.lifecycle import alarm_ids_of, work_order_raise_priority, work_order_transition

__all__ = [
    "EDITABLE_FIELDS",
    "GENERATED_FIELDS",
    "NULLABLE_FIELDS",
    "active_work_order_for_alarm",
    "alarm_ids_of",
    "failure_mode_from_rca",
    "priority_for_alarm",
    "work_order_apply_generated",
    "work_order_apply_rca",
    "work_order_create_from_alarm",
    "work_order_raise_priority",
    "work_order_transition",
    "work_order_update",
]
