"""Equipment KB writes: JSON merge-patch (RFC 7386) plus an appended calibration-log entry."""

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from core.events import publish
from core.json_text import require_storable_text
from sentinel.models import Cell
from workorders.events import EQUIPMENT_KB_UPDATED
from workorders.models import EquipmentKB
from workorders.shapes import kb_data_check, require_finite


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _require_version(current: datetime | None, expected: datetime | None) -> None:
    if current != expected:
        raise Conflict(
            "The equipment KB was changed by someone else since you read it; reload it and apply your change again.",
            field="if_updated_at",
            code="kb_changed",
            updated_at=current.isoformat() if current is not None else None,
        )


def equipment_kb_update(
    *,
    cell: Cell,
    patch: dict[str, Any],
    actor: AbstractBaseUser | None,
    note: str = "",
    replace: bool = False,
    check_version: bool = False,
    if_updated_at: datetime | None = None,
) -> EquipmentKB:
    """Merge-patch (or replace) a cell's KB data and append who changed what to the calibration log.

    The sections the patch touches must keep the KB's shape (`workorders.shapes.EquipmentKbData`:
    `failure_modes` an object of objects, `spare_parts` a list of {ref, name, on_hand}, …) and hold
    only finite numbers; anything else is a 422 naming the field (`patch.failure_modes`, or
    `data.…` for a replace) and nothing is written. Untouched sections are not re-checked, so a row
    stored before the check can still be repaired by a patch.

    With `check_version` the write applies only to the version the writer read: `if_updated_at`
    must be the KB's `updated_at` (None: the cell has no KB row yet), else a 409 `kb_changed`
    naming `if_updated_at` (with the current `updated_at`) and nothing is written — two people
    editing on the equipment page do not silently overwrite each other. Agents do not ask for it.

    Every write publishes one `equipment_kb_updated` (cell, new `updated_at`, actor; no KB content)
    in its transaction, so open equipment pages follow it; a refused write publishes nothing.
    """
    if not isinstance(patch, dict):
        raise InvalidInput("The KB patch must be a JSON object.", field="patch")
    field = "data" if replace else "patch"
    require_finite(patch, field)  # before merging: a NaN the merge would drop is still refused
    # no NUL or lone surrogate: the door and dispatch refuse them; this is for any other caller
    require_storable_text({field: patch, "note": note})
    with transaction.atomic():
        kb, created = EquipmentKB.objects.get_or_create(cell=cell)
        kb = EquipmentKB.objects.select_for_update().get(pk=kb.pk)
        if check_version:
            _require_version(None if created else kb.updated_at, if_updated_at)
        before = kb.data if isinstance(kb.data, dict) else {}
        kb.data = dict(patch) if replace else merge_patch(before, patch)
        kb_data_check(kb.data, keys=None if replace else patch.keys(), prefix=field)
        changed = sorted(k for k in set(before) | set(kb.data) if before.get(k) != kb.data.get(k))
        entry = {
            "time": timezone.now().isoformat(),
            "actor": actor.get_username() if actor is not None and actor.is_authenticated else "system",
            "changed": changed,
            "note": note[:500],
        }
        kb.calibration_log = [*(kb.calibration_log or []), entry]
        kb.save(update_fields=["data", "calibration_log", "updated_at"])
        publish(
            EQUIPMENT_KB_UPDATED,
            {"cell_id": cell.pk, "updated_at": kb.updated_at.isoformat(), "actor": entry["actor"]},
        )
        audit_record(
            actor=actor,
            action="equipment_kb.update",
            target_type="equipment_kb",
            target_id=cell.pk,
            details={"changed": changed, "note": note[:500], "replace": replace},
        )
    return kb
