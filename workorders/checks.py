"""Database checks (`manage.py check --database default`): rows stored before their shapes were
checked on write (workorders/shapes.py). The pages and agents read them tolerantly — a malformed
entry is skipped — so nothing breaks, but what was skipped is invisible; these warnings name each
row and the field, so an admin can correct it in the admin (whose forms now check the shape)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core import checks

from core.db_checks import capped_warnings, tables_ready
from core.errors import InvalidInput

HINT = "Correct it in the admin (its form checks the shape) or through the API."


@checks.register(checks.Tags.database)
def stored_shapes_check(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from workorders.models import EquipmentKB, WorkOrder

    if not tables_ready(databases, WorkOrder, EquipmentKB):
        return []
    orders = capped_warnings(
        _bad_work_orders(), check_id="workorders.W001", hint=HINT, more="more work orders with a malformed field."
    )
    kbs = capped_warnings(
        _bad_kbs(), check_id="workorders.W002", hint=HINT, more="more equipment KBs of the wrong shape."
    )
    return orders + kbs


def _bad_work_orders() -> Iterator[str]:
    from workorders.models import WorkOrder
    from workorders.shapes import WORK_ORDER_LISTS, work_order_list_clean

    fields = list(WORK_ORDER_LISTS)
    for row in WorkOrder.objects.order_by("pk").values("pk", *fields).iterator(chunk_size=2000):
        problems = []
        for name in fields:  # every malformed field of the row, in one warning (the cap counts rows)
            try:
                work_order_list_clean(name, row[name])
            except InvalidInput as exc:
                problems.append(exc.message)
        if problems:
            yield f"Work order {row['pk']}: {'; '.join(problems)}"


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
