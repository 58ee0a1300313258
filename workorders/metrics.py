"""Workorders' metrics (core.metrics): work orders by status, read at scrape time in one query."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count
from prometheus_client.metrics_core import Metric

from core.metrics import counts_family, register_collector
from workorders.choices import WorkOrderStatus
from workorders.models import WorkOrder


def work_orders_collect() -> Iterable[Metric]:
    rows = WorkOrder.objects.values_list("status").annotate(n=Count("id")).order_by()
    yield counts_family("aria_work_orders", "Work orders by status.", "status", dict(rows), WorkOrderStatus.values)


def register() -> None:
    """From WorkordersConfig.ready()."""
    register_collector("workorders.work_orders", work_orders_collect)
