"""Sentinel announces alarms; workorders opens and escalates work orders for them."""

import logging

from django.db import transaction
from django.dispatch import receiver

from core.events import publish
from sentinel.models import Alarm
from sentinel.signals import alarm_escalated, alarm_raised
from workorders.services import priority_for_alarm, work_order_create_from_alarm, work_order_raise_priority
from workorders.services.alarm_intake import active_work_order_for_alarm

logger = logging.getLogger(__name__)


@receiver(alarm_raised, dispatch_uid="workorders.on_alarm_raised")
def on_alarm_raised(sender, alarm: Alarm, **kwargs) -> None:
    # A savepoint: a work-order failure is logged, never rolls back sentinel's alarm.
    try:
        with transaction.atomic():
            work_order_create_from_alarm(alarm=alarm)
    except Exception:
        logger.exception("Could not open a work order for alarm %s", alarm.pk)


@receiver(alarm_escalated, dispatch_uid="workorders.on_alarm_escalated")
def on_alarm_escalated(sender, alarm: Alarm, **kwargs) -> None:
    try:
        with transaction.atomic():
            work_order = active_work_order_for_alarm(alarm)
            if work_order is None:
                # A new order (announced by its creation), or the signal's active order the alarm
                # joined as a repeat (its priority follows the alarm's severity there).
                work_order_create_from_alarm(alarm=alarm)
                return
            work_order_raise_priority(
                work_order=work_order,
                priority=priority_for_alarm(alarm),
                actor=None,
                reason=f"alarm #{alarm.pk} escalated to {alarm.severity}",
            )
            signal = alarm.signal
            publish(
                "ui_render",
                {
                    "agent": "sentinel",
                    "component": "alert_banner",
                    "props": {
                        "cell_id": signal.cell_id,
                        "severity": alarm.severity,
                        "message": (
                            f"{signal.cell.tag} {signal.display_name} escalated to {alarm.severity.upper()}: "
                            f"{alarm.value:g} {signal.unit}".strip()
                        ),
                        "anomaly_id": alarm.pk,
                    },
                },
            )
    except Exception:
        logger.exception("Could not escalate the work order of alarm %s", alarm.pk)
