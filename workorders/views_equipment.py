"""The equipment page /equipment/<cell_id>/: a cell's equipment KB (`EquipmentKB.data`) read as
tables and lists, its calibration log and who changed it last; operators edit it in place.

Everything is rendered here (autoescaped); the page script (static/workorders/equipment_page.js)
only turns the inputs rendered beside each value into a merge patch for the one write path,
`PATCH /api/v1/workorders/kb/{cell_id}` (with `if_updated_at`: a change made meanwhile is a 409,
not an overwrite), then re-reads this page. It follows `equipment_kb_updated` on the event bus:
re-reads on another writer's change, or says while editing that the save will be refused.
Operator scope, as the KB API."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.access import OPERATOR, has_scopes
from core.humantime import human_time
from core.models import Event
from sentinel.models import Cell
from workorders import selectors

KB_PATH = "/api/v1/workorders/kb/{id}"
# The calibration log grows on every write (agents, stock moves); the page shows the newest ones.
LOG_SHOWN = 50
# The sections with a table of their own, and the type they need for it; any other key (or one of
# these of another type, stored before the shape check) is shown (and edited) generically.
KNOWN: dict[str, type] = {
    "equipment": dict,
    "failure_modes": dict,
    "spare_parts": list,
    "procedures": dict,
    "permits": list,
}


def _label(key: str) -> str:
    return key.replace("_", " ")


def _list(value: Any) -> list[Any]:
    """A list field as stored; anything else (a number stored before the shape check) as none."""
    return value if isinstance(value, list) else []


def _item_text(value: Any) -> str:
    """A list item as text: strings as they are, anything else (an object) as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# Keys whose shape is a number (workorders.shapes): their input sends a number even when empty.
NUMBER_KEYS = ("duration_min", "on_hand")


def _field(path: list[Any], value: Any, label: str = "") -> dict[str, Any]:
    """One value with the input that edits it: `kind` text, number or lines (a list of strings)."""
    if path[-1] in NUMBER_KEYS and not isinstance(value, (list, dict)):
        kind, text = "number", "" if value is None else str(value)
    elif isinstance(value, list):
        kind, text = "lines", "\n".join(_item_text(v) for v in value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        kind, text = "number", str(value)
    else:
        kind, text = "text", "" if value is None else str(value)
    return {
        "path": json.dumps(path),
        "name": ".".join(str(p) for p in path),
        "kind": kind,
        "value": text,
        "items": [_item_text(v) for v in value] if isinstance(value, list) else None,
        "label": label or _label(str(path[-1])),
        # A text area for long text and for any line break: a one-line input drops line breaks from
        # its value, which would then differ from the text read and be saved rewritten on one line.
        "multiline": kind == "text" and (len(text) > 60 or "\n" in text or "\r" in text),
        "editable": all(not isinstance(v, (dict, list)) for v in value) if isinstance(value, list) else True,
    }


def _rows(prefix: list[Any], value: dict[str, Any], label: str = "") -> list[dict[str, Any]]:
    """A dict flattened into labelled rows ('bearings › drive end'), one per leaf."""
    rows: list[dict[str, Any]] = []
    for key, item in value.items():
        name = f"{label} › {_label(key)}" if label else _label(key)
        if isinstance(item, dict) and item:
            rows.extend(_rows([*prefix, key], item, name))
        elif isinstance(item, dict):
            continue
        else:
            rows.append(_field([*prefix, key], item, name))
    return rows


def _failure_modes(section: Any) -> list[dict[str, Any]]:
    modes = []
    for mode, info in (section or {}).items() if isinstance(section, dict) else ():
        if not isinstance(info, dict):
            modes.append({"name": mode, "fields": [_field(["failure_modes", mode], info, "value")], "parts": []})
            continue
        keys = ["remedy", "procedure", "duration_min", "signals", "signatures", "skills"]
        keys += [k for k in info if k not in keys and k != "parts"]
        fields = [
            _field(["failure_modes", mode, k], info.get(k, "" if k != "duration_min" else None), _label(k))
            for k in keys
        ]
        parts = [p for p in _list(info.get("parts")) if isinstance(p, dict)]
        modes.append({"name": mode, "fields": fields, "parts": parts})
    return modes


def _spare_parts(section: Any) -> list[dict[str, Any]]:
    rows = []
    for index, part in enumerate(section if isinstance(section, list) else []):
        if not isinstance(part, dict):
            continue
        rows.append(
            {
                "ref": part.get("ref", ""),
                "name": _field(["spare_parts", index, "name"], part.get("name", "")),
                "on_hand": _field(["spare_parts", index, "on_hand"], part.get("on_hand", 0)),
            }
        )
    return rows


def _procedures(section: Any) -> list[dict[str, Any]]:
    procedures = []
    for ref, proc in (section or {}).items() if isinstance(section, dict) else ():
        proc = proc if isinstance(proc, dict) else {}
        procedures.append(
            {
                "ref": ref,
                "title": _field(["procedures", ref, "title"], proc.get("title", "")),
                "steps": _field(
                    ["procedures", ref, "steps"], [s for s in _list(proc.get("steps")) if isinstance(s, str)]
                ),
            }
        )
    return procedures


def _others(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Sections engineers added (vibration zones, notes, …): a table of leaves, or one value."""
    sections = []
    for key, value in data.items():
        if key in KNOWN and isinstance(value, KNOWN[key]):
            continue
        rows = _rows([key], value) if isinstance(value, dict) else [_field([key], value, _label(key))]
        sections.append({"key": key, "title": _label(key), "rows": rows})
    return sections


def kb_view(data: Any) -> dict[str, Any]:
    """The KB data as the template's sections (tolerant: a malformed section is shown as it is)."""
    data = data if isinstance(data, dict) else {}
    equipment = data.get("equipment")
    permits = data.get("permits")
    return {
        "equipment": _rows(["equipment"], equipment) if isinstance(equipment, dict) else [],
        "failure_modes": _failure_modes(data.get("failure_modes")),
        "spare_parts": _spare_parts(data.get("spare_parts")),
        "procedures": _procedures(data.get("procedures")),
        "permits": _field(["permits"], permits if isinstance(permits, list) else []),
        "others": _others(data),
    }


def _log_entry(entry: dict[str, Any]) -> dict[str, Any]:
    changed = entry.get("changed")
    return {
        "time": str(entry.get("time", "")),
        "when": human_time(str(entry["time"])) if entry.get("time") else "",
        "actor": str(entry.get("actor", "")),
        "changed": ", ".join(str(c) for c in changed) if isinstance(changed, list) else "",
        "note": str(entry.get("note", "")),
    }


@login_required
@require_GET
def equipment_page(request: HttpRequest, cell_id: int) -> HttpResponse:
    if not has_scopes(request.user, (OPERATOR,)):
        return render(request, "workorders/equipment.html", {"allowed": False}, status=403)
    cell = Cell.objects.select_related("line__site").filter(pk=cell_id).first()
    if cell is None:
        raise Http404("Cell not found.")
    kb = selectors.equipment_kb(cell)
    data = kb.data if kb is not None and isinstance(kb.data, dict) else {}
    log = kb.calibration_log if kb is not None and isinstance(kb.calibration_log, list) else []
    entries = [_log_entry(e) for e in reversed(log) if isinstance(e, dict)]
    updated_at = kb.updated_at.isoformat() if kb is not None else None
    context = {
        "allowed": True,
        "cell": cell,
        "kb": kb_view(data),
        "has_kb": bool(data),
        "updated_at": updated_at,
        "updated_text": human_time(kb.updated_at) if kb is not None else "",
        "last_entry": entries[0] if entries else None,
        "log": entries[:LOG_SHOWN],
        "log_count": len(entries),
        "page_data": {
            "cell_id": cell.pk,
            "data": data,
            "updated_at": updated_at,
            # where the page's event stream starts: an equipment_kb_updated committed since is replayed
            "latest_event_id": Event.objects.order_by("-id").values_list("id", flat=True).first() or 0,
            "paths": {"kb": KB_PATH.replace("{id}", str(cell.pk))},
        },
    }
    return render(request, "workorders/equipment.html", context)
