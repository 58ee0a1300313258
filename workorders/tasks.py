"""Thin Celery tasks: load by id, guard the state in the query, call one service."""

from celery import shared_task

from workorders.choices import WorkOrderStatus
from workorders.models import WorkOrder
from workorders.services.investigation import work_order_generate, work_order_investigate


@shared_task(name="workorders.investigate", acks_late=True, soft_time_limit=180, time_limit=240)
def investigate_task(work_order_id: int) -> None:
    # Only a `detected` order is investigated; the RCA write re-checks under a row lock, so a
    # duplicate or redelivered task never records a second RCA.
    if not WorkOrder.objects.filter(pk=work_order_id, status=WorkOrderStatus.DETECTED).exists():
        return
    work_order_investigate(work_order_id=work_order_id)


@shared_task(name="workorders.generate", acks_late=True, soft_time_limit=180, time_limit=240)
def generate_task(work_order_id: int) -> None:
    if not WorkOrder.objects.filter(pk=work_order_id, status=WorkOrderStatus.ANALYZED).exists():
        return
    work_order_generate(work_order_id=work_order_id)
