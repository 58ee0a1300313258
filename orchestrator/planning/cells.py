"""Equipment tags named in free text (P-02, C-01, CV-03, PR-05, and a train's unit: P-02A) resolved
to cells.

Resolution goes through the `workorders.find_cells` capability, dispatched as the given user, so
the orchestrator never reads another app's tables and the user's scopes apply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.capabilities import CapabilityContext, dispatch
from core.json_types import ROW_ID_MAX

TAG = re.compile(r"\b([A-Z]{1,3}-\d{1,3}[A-Z]?)\b", re.IGNORECASE)


def equipment_tags(text: str) -> list[str]:
    """Distinct equipment tags in the order they appear, upper-cased ("p-02" is P-02)."""
    return list(dict.fromkeys(tag.upper() for tag in TAG.findall(text or "")))


def exact_cell(cells: list[dict[str, Any]], tag: str) -> dict[str, Any] | None:
    """The row whose tag is exactly `tag` (find_cells also returns fragment matches)."""
    return next((c for c in cells if str(c.get("tag", "")).upper() == tag.upper()), None)


def read(user: AbstractBaseUser, capability: str, args: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Dispatch a read as `user`: (content, "") or (None, why it failed)."""
    result = dispatch(capability, args, ctx=CapabilityContext(user=user))
    if result.is_error:
        return None, result.message
    return (result.content if isinstance(result.content, dict) else {}), ""


def resolve_tag(user: AbstractBaseUser, tag: str) -> tuple[dict[str, Any] | None, str]:
    """(the cell row, "") or (None, the reason it could not be resolved)."""
    found, error = read(user, "workorders.find_cells", {"query": tag})
    if found is None:
        return None, f"could not look up {tag}: {error}"
    cell = exact_cell(found.get("cells") or [], tag)
    return (cell, "") if cell else (None, f"no cell is tagged {tag}")


TAGS_PER_READ = 500  # the most ids find_cells takes at once (its `cell_ids`)


def cell_tags(user: AbstractBaseUser, cell_ids: Iterable[int]) -> dict[int, str]:
    """{cell id: tag} for `cell_ids`, read as `user` with find_cells by id: one read for up to 500
    cells (none when no id is asked for). A cell that no longer exists, or one `user` may not read,
    is left out: the caller shows its id."""
    wanted = sorted({c for c in cell_ids if 0 < c <= ROW_ID_MAX})  # what find_cells takes as an id
    tags: dict[int, str] = {}
    for start in range(0, len(wanted), TAGS_PER_READ):
        found, _ = read(user, "workorders.find_cells", {"cell_ids": wanted[start : start + TAGS_PER_READ]})
        tags |= {row["cell_id"]: str(row["tag"]) for row in (found or {}).get("cells") or []}
    return tags
