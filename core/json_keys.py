"""A JSON request body names each key of an object once, and carries only finite numbers.

`{"to_status": "open", "to_status": "cancelled"}` is valid JSON whose meaning depends on the
reader: Python's json and msgspec keep the last value, other parsers (a proxy, a WAF, a log
pipeline) the first or refuse it. A body a logger read as "open" would be acted on as
"cancelled". `core.request_limits` refuses such a body on every /api/ route before any view
parses it (400 `duplicate_key`, `field` the key's dotted path, e.g. `samples.3.value`).

The check has to stay cheap on the ingest route (10,000 samples, ~0.8 MB), so it counts in C:
every colon of a JSON text is a key's separator or a character of a string, and msgspec's
re-encoding of the parsed body keeps each string's colons (it never escapes one). A parse that
dropped a repeated key dropped its separator too, so the re-encoding has fewer colons than the
body exactly when a key repeats (~1.5 ms per 5,000 samples; a hooked `json.loads` costs ~10 ms).
Only then, or when the body spells a colon as `\\u003a`, is it walked in Python to name the key.

msgspec reads strict JSON: `NaN`, `Infinity` and numbers beyond a double's range fail it, where
Python's json (and so ninja's parser) reads them as floats that pydantic passes on and a JSON
column refuses (a 500) — so the same slow walk names such a number too (422 `invalid`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import msgspec

_COLON_ESCAPES = (b"\\u003a", b"\\u003A")


class _Pairs(list[tuple[str, Any]]):
    """An object's (key, value) pairs in document order, repeats kept."""


class _NonFinite(str):
    """A number JSON cannot carry, as the body spelled it: `NaN`, `Infinity`, `-Infinity` (Python's
    json reads them; RFC 8259 has no such literal) or one beyond a double's range (`1e999`)."""


def _number(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _parses_strictly(body: bytes) -> bool:
    """True when msgspec (strict RFC 8259, doubles only) reads `body` and keeps every key; False
    when it may not — a repeated key, a non-finite number, or a body msgspec cannot say of."""
    if any(escape in body for escape in _COLON_ESCAPES):  # a colon the re-encoding would write out
        return False
    try:
        encoded = msgspec.json.encode(msgspec.json.decode(body))
    except (msgspec.MsgspecError, UnicodeDecodeError, OverflowError, ValueError):
        return False
    return encoded.count(b":") == body.count(b":")


@dataclass(frozen=True)
class JsonBodyProblem:
    kind: str  # "duplicate_key" or "non_finite"
    field: str  # dotted path, e.g. samples.3.value
    token: str  # the repeated key, or the number as spelled


def json_body_problem(body: bytes) -> JsonBodyProblem | None:
    """The first repeated key within one object, or non-finite number, of a JSON body, in
    document order — or None. A body that is not JSON is None: the parser answers it."""
    if _parses_strictly(body):
        return None
    try:
        document = json.loads(body, object_pairs_hook=_Pairs, parse_constant=_NonFinite, parse_float=_number)
    except (ValueError, RecursionError):
        return None
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:  # iterative, pre-order: an object's own repeat before its members'
        path, value = pending.pop()
        if isinstance(value, _NonFinite):
            return JsonBodyProblem("non_finite", path or "body", str(value))
        if isinstance(value, _Pairs):
            seen: set[str] = set()
            for key, _item in value:
                if key in seen:
                    return JsonBodyProblem("duplicate_key", f"{path}.{key}" if path else key, key)
                seen.add(key)
            pending.extend((f"{path}.{key}" if path else key, item) for key, item in reversed(value))
        elif isinstance(value, list):
            pending.extend(
                (f"{path}.{index}" if path else str(index), item) for index, item in reversed(list(enumerate(value)))
            )
    return None


def json_duplicate_key(body: bytes) -> tuple[str, str] | None:
    """(dotted path, key) of the first key a JSON body repeats within one object, or None."""
    problem = json_body_problem(body)
    return (problem.field, problem.token) if problem is not None and problem.kind == "duplicate_key" else None
