"""Spare parts against the equipment's stock: the KB's `spare_parts` list (ref, name, on_hand) is
the stock of the parts that fit that equipment. Shortages are flagged when an order opens; parts
used are checked and taken from stock when it completes."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.errors import InvalidInput
from workorders.models import EquipmentKB, WorkOrder
from workorders.services.kb import equipment_kb_update
from workorders.shapes import kb_objects


def _qty(value: Any) -> int:
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return 0


def spare_parts_of(data: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """ref → the KB's spare-part entry (with an integer `on_hand`)."""
    parts = kb_objects(data.get("spare_parts")) if isinstance(data, dict) else []  # old rows may hold anything
    return {
        str(p["ref"]): {**p, "on_hand": _qty(p.get("on_hand"))} for p in parts if isinstance(p, dict) and p.get("ref")
    }


def part_shortages(work_order: WorkOrder) -> list[dict[str, Any]]:
    """Required parts the equipment's stock cannot cover: not listed for it, or fewer on hand."""
    kb = EquipmentKB.objects.filter(cell_id=work_order.cell_id).only("data").first()
    stock = spare_parts_of(kb.data if kb else {})
    needed: dict[str, int] = {}
    for part in work_order.required_parts or []:
        if isinstance(part, dict) and part.get("ref"):
            needed[str(part["ref"])] = needed.get(str(part["ref"]), 0) + max(_qty(part.get("qty", 1)), 1)
    short = []
    for ref, qty in needed.items():
        listed = ref in stock
        on_hand = stock[ref]["on_hand"] if listed else 0
        if qty > on_hand:
            short.append({"ref": ref, "qty": qty, "on_hand": on_hand, "listed": listed})
    return short


def parts_take_from_stock(
    *, work_order: WorkOrder, parts: list[dict[str, Any]], actor: AbstractBaseUser | None
) -> list[dict[str, Any]]:
    """Check `parts` ([{ref, qty}]) against the equipment's spare parts and decrement the stock.

    Runs inside the caller's transaction (it locks the KB row, after the work order: lock order);
    any problem raises InvalidInput naming `parts_used.<i>.<field>` before anything is written."""
    if not parts:
        return []
    kb = EquipmentKB.objects.select_for_update().filter(cell_id=work_order.cell_id).first()
    stock = spare_parts_of(kb.data if kb else {})
    wanted: dict[str, int] = {}
    for index, part in enumerate(parts):
        ref, qty = str(part["ref"]), int(part["qty"])
        if ref not in stock:
            raise InvalidInput(
                f"parts_used.{index}.ref: {ref!r} is not a spare part of {work_order.cell.tag}.",
                field=f"parts_used.{index}.ref",
                code="unknown_part",
                allowed=sorted(stock),
            )
        wanted[ref] = wanted.get(ref, 0) + qty
        if wanted[ref] > stock[ref]["on_hand"]:
            raise InvalidInput(
                f"parts_used.{index}.qty: {wanted[ref]} × {ref} used but only {stock[ref]['on_hand']} in stock.",
                field=f"parts_used.{index}.qty",
                code="insufficient_stock",
                on_hand=stock[ref]["on_hand"],
            )
    spare_parts = [
        {**p, "on_hand": _qty(p.get("on_hand")) - wanted.get(str(p.get("ref")), 0)}
        if isinstance(p, dict) and str(p.get("ref")) in wanted
        else p
        for p in kb_objects(kb.data.get("spare_parts") if kb is not None and isinstance(kb.data, dict) else None)
    ]
    note = "Used on WO-{}: {}".format(work_order.pk, ", ".join(f"{q}× {r}" for r, q in wanted.items()))
    equipment_kb_update(cell=work_order.cell, patch={"spare_parts": spare_parts}, actor=actor, note=note)
    return [{"ref": ref, "qty": qty, "name": stock[ref].get("name", "")} for ref, qty in wanted.items()]
