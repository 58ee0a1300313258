"""The machine-readable context line every maintenance agent's task message carries."""

import json
import re
from typing import Any

_CONTEXT = re.compile(r"^Context: (\{.*\})\s*$", re.MULTILINE)


def context_line(data: dict[str, Any]) -> str:
    return "Context: " + json.dumps(data, sort_keys=True, default=str)


def parse_context(text: str) -> dict[str, Any]:
    """The JSON of the last `Context: {...}` line in a message, or {}."""
    found = _CONTEXT.findall(text or "")
    if not found:
        return {}
    try:
        value = json.loads(found[-1])
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
