"""Creation by hand: a technician or operator who finds a problem in the field (a leak, a noise, a
loose guard) raises a work order on a cell. No alarm, no agent: the order starts `open`
(`RAISED_BY_HAND_STATUS`), from where it is assigned, started and completed like any other, and
records who raised it (`raised_by`).

A request with an `Idempotency-Key` raises at most one order per person and key (a unique
constraint backs it, so two racing requests cannot both write): the same key with the same values
answers the order already raised (as it stands: a retry comes within seconds); with other values
it is a 409.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction

from core.access import OPERATOR, require_scopes, stored_user
from core.audit import audit_record
from core.errors import InvalidInput, NotAuthenticated
from core.events import publish
from core.idempotency import key_reused, once
from core.json_text import require_storable_text
from sentinel.models import Cell
from workorders.choices import RAISED_BY_HAND_STATUS, Priority
from workorders.events import WORK_ORDER_UPDATED
from workorders.models import WorkOrder, WorkOrderEvent
from workorders.services.edits import MAX_DESCRIPTION_CHARS
from workorders.services.lifecycle import actor_name

MAX_TITLE_CHARS = 200  # WorkOrder.title


def _checked(title: str, description: str, priority: str) -> tuple[str, str]:
    """The title and description as stored (stripped), or the 422 naming the field at fault."""
    if not isinstance(title, str) or not title.strip():
        raise InvalidInput("title: say what you found.", field="title")
    title = title.strip()
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInput(f"title: at most {MAX_TITLE_CHARS} characters.", field="title")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS:
        raise InvalidInput(f"description: text of at most {MAX_DESCRIPTION_CHARS} characters.", field="description")
    require_storable_text({"title": title, "description": description})  # for a caller past no check
    if priority not in Priority.values:
        raise InvalidInput(f"Unknown priority {priority!r}.", field="priority", allowed=list(Priority.values))
    return title, description.strip()


def _cell(cell: Cell | int) -> Cell:
    if isinstance(cell, Cell):
        return cell
    found = Cell.objects.filter(pk=cell).first()
    if found is None:
        raise InvalidInput(f"cell: no cell has id {cell}.", field="cell", code="unknown_cell")
    return found


def _replay(actor: User, key: str, cell: Cell, title: str, description: str, priority: str) -> WorkOrder | None:
    """The order this person raised with this key, if any; a 409 when the retry asks for another."""
    earlier = WorkOrder.objects.filter(raised_by=actor, raise_key=key).first()
    if earlier is None:
        return None
    asked = (cell.pk, title, description, priority)
    if (earlier.cell_id, earlier.title, earlier.description, earlier.priority) != asked:
        raise key_reused(
            f"Idempotency-Key was already used to raise work order {earlier.pk} with other values.",
            work_order_id=earlier.pk,
        )
    return earlier


def work_order_raise(
    *,
    cell: Cell | int,
    title: str,
    actor: AbstractBaseUser | AnonymousUser | None,
    description: str = "",
    priority: str = Priority.MEDIUM,
    idempotency_key: str | None = None,
) -> tuple[WorkOrder, bool]:
    """Raise a work order by hand on `cell`; returns (order, replayed). Operators only.

    Writes the order (`open`, `raised_by`), its history row ("" → open), the audit record
    `work_order.create` and `work_order_updated` (change `created`) in one transaction: a refused
    request writes nothing. A replayed key (same values) writes nothing and returns the first order.
    """
    require_scopes(actor, OPERATOR)
    user = stored_user(actor)
    if user is None:  # require_scopes has refused anyone who is not a stored user
        raise NotAuthenticated("Authentication required.")
    title, description = _checked(title, description, priority)
    found = _cell(cell)
    if not idempotency_key:
        with transaction.atomic():
            return _create(user, found, title, description, priority, ""), False
    key = idempotency_key
    return once(
        earlier=lambda: _replay(user, key, found, title, description, priority),
        write=lambda: _create(user, found, title, description, priority, key),
    )


def _create(user: User, cell: Cell, title: str, description: str, priority: str, key: str) -> WorkOrder:
    work_order = WorkOrder.objects.create(
        cell=cell,
        title=title,
        description=description,
        status=RAISED_BY_HAND_STATUS,
        priority=priority,
        raised_by=user,
        raise_key=key,
    )
    name = actor_name(user)
    WorkOrderEvent.objects.create(
        work_order=work_order,
        from_status="",
        to_status=RAISED_BY_HAND_STATUS,
        actor=user,
        note=f"Raised by hand by {name}"[:500],
        details={"raised_by": name, "priority": priority},
    )
    audit_record(
        actor=user,
        action="work_order.create",
        target_type="work_order",
        target_id=work_order.pk,
        details={"raised_by_hand": True, "cell_id": cell.pk, "priority": priority, "status": RAISED_BY_HAND_STATUS},
    )
    # The Control Room (and any page showing orders) re-reads on it: the new order appears live.
    publish(
        WORK_ORDER_UPDATED,
        {
            "work_order_id": work_order.pk,
            "status": RAISED_BY_HAND_STATUS,
            "from_status": "",
            "change": "created",
            "actor": name,
        },
    )
    return work_order
