"""Workorders services: every write goes through one of these."""

from workorders.services.agent_results import work_order_apply_generated, work_order_apply_rca
from workorders.services.alarm_intake import priority_for_alarm, work_order_create_from_alarm
from workorders.services.edits import work_order_update
from workorders.services.kb import equipment_kb_update, merge_patch
from workorders.services.lifecycle import work_order_raise_priority, work_order_transition
from workorders.services.manual_intake import work_order_raise
from workorders.services.system_user import system_user

__all__ = [
    "equipment_kb_update",
    "merge_patch",
    "priority_for_alarm",
    "system_user",
    "work_order_apply_generated",
    "work_order_apply_rca",
    "work_order_create_from_alarm",
    "work_order_raise",
    "work_order_raise_priority",
    "work_order_transition",
    "work_order_update",
]
