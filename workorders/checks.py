"""Database checks (`manage.py check --database default`): rows stored before their shapes were
checked on write (workorders/shapes.py). The pages and agents read them tolerantly — a malformed
entry is skipped — so nothing breaks, but what was skipped is invisible; these warnings name each
row and the field, so an admin can correct it in the admin (whose forms now check the shape)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core import checks
from django.db import DEFAULT_DB_ALIAS

from core.errors import InvalidInput

NAMED = 20  # rows named one by one; more are summed up in one warning


@checks.register(checks.Tags.database)
def stored_shapes_check(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if not databases or DEFAULT_DB_ALIAS not in databases:
        return []  # a database check runs only when asked for (check --database)
    return _limited(_bad_work_orders(), "workorders.W001", "work orders") + _limited(
        _bad_kbs(), "workorders.W002", "equipment KBs"
    )


def _bad_work_orders() -> Iterator[str]:
    from workorders.models import WorkOrder
    from workorders.shapes import WORK_ORDER_LISTS, work_order_list_clean

    fields = list(WORK_ORDER_LISTS)
    for row in WorkOrder.objects.order_by("pk").values("pk", *fields).iterator(chunk_size=2000):
        for name in fields:
            try:
                work_order_list_clean(name, row[name])
            except InvalidInput as exc:
                yield f"Work order {row['pk']}: {exc.message}"
                break


def _bad_kbs() -> Iterator[str]:
    from workorders.models import EquipmentKB
    from workorders.shapes import kb_data_check

    for pk, cell_id, data in EquipmentKB.objects.order_by("pk").values_list("pk", "cell_id", "data").iterator():
        try:
            if not isinstance(data, dict):
                raise InvalidInput("data: must be an object.", field="data")
            kb_data_check(data)
        except InvalidInput as exc:
            yield f"Equipment KB {pk} (cell {cell_id}): {exc.message}"


def _limited(found: Iterator[str], check_id: str, what: str) -> list[checks.CheckMessage]:
    hint = "Correct it in the admin (its form checks the shape) or through the API."
    messages: list[checks.CheckMessage] = []
    extra = 0
    for text in found:
        if len(messages) < NAMED:
            messages.append(checks.Warning(text, hint=hint, id=check_id))
        else:
            extra += 1
    if extra:
        messages.append(checks.Warning(f"{extra} more {what} with a malformed field.", hint=hint, id=check_id))
    return messages
