"""Fill a capability's input from what is known, by its schema's property names.

Used where the assistant calls another app's capability whose exact input it does not own (the
fake policies and ask_investigator): synonyms map known values onto the declared properties.
"""

from __future__ import annotations

from typing import Any

from core.capabilities import registry

SYNONYMS: dict[str, tuple[str, ...]] = {
    "cell_id": ("cell_id", "cell", "equipment_id"),
    "tag": ("tag", "cell_tag", "equipment_tag", "query", "q", "name", "search"),
    "question": ("question", "reason", "goal", "prompt", "text", "query"),
    "hours": ("hours", "window_hours", "lookback_hours"),
    "signal": ("signal", "signal_name", "signal_key"),
    "work_order_id": ("work_order_id",),
    "signal_def_ids": ("signal_def_ids",),
    "minutes": ("minutes",),
    "limit": ("limit",),
}


def schema_of(name: str, tools: list[dict] | None = None) -> dict[str, Any]:
    for tool in tools or []:
        if tool.get("name") == name:
            return tool.get("input_schema") or {}
    cap = registry.get(name)
    return cap.input_schema() if cap else {}


def args_for(name: str, known: dict[str, Any], tools: list[dict] | None = None) -> dict[str, Any]:
    """Arguments for `name`: every declared property we have a value for."""
    props = schema_of(name, tools).get("properties", {})
    if not props:
        return {k: v for k, v in known.items() if v is not None}
    args: dict[str, Any] = {}
    for key, value in known.items():
        if value is None:
            continue
        for candidate in SYNONYMS.get(key, (key,)):
            if candidate in props and candidate not in args:
                args[candidate] = value
                break
    return args


def accepts(name: str, key: str, tools: list[dict] | None = None) -> bool:
    props = schema_of(name, tools).get("properties", {})
    return any(c in props for c in SYNONYMS.get(key, (key,)))
