"""OFFLINE STAND-IN (fake engine only): the one change the offline authoring assistant proposes —
a work order's priority, when the engineer asks for it in so many words — and only when the session
asks before mutating calls (the call then waits for the user's Confirm; it never runs by itself).

    "set the priority of work order 7 to high" · "change WO-7 priority to critical"
"""

from __future__ import annotations

import re

PRIORITIES = ("low", "medium", "high", "critical")
_ORDER = r"(?:work\s*order|wo)[\s#-]*(?P<wo>\d+)"
_PRIORITY = rf"(?P<priority>{'|'.join(PRIORITIES)})"
PRIORITY_PHRASES = (
    re.compile(rf"\b(?:set|change|raise|lower|make)\b.*?\bpriority of {_ORDER}\b.*?\bto {_PRIORITY}\b", re.I),
    re.compile(rf"\b(?:set|change|raise|lower|make)\b\s+{_ORDER}(?:'s)?\s+priority\b.*?\bto {_PRIORITY}\b", re.I),
    re.compile(rf"\b(?:set|change|raise|lower|make)\b\s+{_ORDER}\s+(?:to\s+)?{_PRIORITY}\s+priority\b", re.I),
)


def priority_change(text: str) -> dict[str, object] | None:
    """{work_order_id, priority} when the text asks for exactly that change, else None."""
    for phrase in PRIORITY_PHRASES:
        match = phrase.search(text)
        if match:
            return {"work_order_id": int(match["wo"]), "priority": match["priority"].lower()}
    return None
