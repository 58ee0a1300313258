"""A JSON request body names each key of an object once, and carries only finite numbers.

`{"to_status": "open", "to_status": "cancelled"}` is valid JSON whose meaning depends on the
reader: Python's json and msgspec keep the last value, other parsers (a proxy, a WAF, a log
pipeline) the first or refuse it. A body a logger read as "open" would be acted on as
"cancelled". `core.json_body` refuses such a body on every /api/ route once the caller is
authenticated, before the route reads it (400 `duplicate_key`, `field` the key's dotted path,
e.g. `samples.3.value`); the chat socket and the MCP endpoint do too.

The check has to stay cheap on the ingest route (10,000 samples, ~0.8 MB), so it counts in C:
every colon of a JSON text is a key's separator or a character of a string, and msgspec's
re-encoding of the parsed body keeps each string's colons (it never escapes one). A parse that
dropped a repeated key dropped its separator too, so the re-encoding has fewer colons than the
body exactly when a key repeats (~1.5 ms per 5,000 samples; a hooked `json.loads` costs ~10 ms);
a colon the body spells `\\u003a` is counted as the one the re-encoding writes. Only on a mismatch
is it walked in Python to name the key — at a few times json.loads' cost (nested small lists: ~2 s
for 2 MB, which is why it runs after authentication): objects are read as tuples of pairs and only
containers and non-finite numbers are visited (a list-subclass hook and a path per value cost more).

msgspec reads strict JSON: `NaN`, `Infinity` and numbers beyond a double's range fail it, where
Python's json (and so ninja's parser) reads them as floats that pydantic passes on and a JSON
column refuses (a 500) — so the same slow walk names such a number too (422 `invalid`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import msgspec

_CONTAINERS = (tuple, list)  # an object (its pairs) and an array, as the walk reads them
_COLON_ESCAPES = (b"\\u003a", b"\\u003A")
# `\\u003a` preceded by an even number of backslashes (an odd number would escape the first one).
_ESCAPED_COLON = re.compile(rb"(?<!\\)(?:\\\\)*\\u003[aA]")


class _NonFinite(str):
    """A number JSON cannot carry, as the body spelled it: `NaN`, `Infinity`, `-Infinity` (Python's
    json reads them; RFC 8259 has no such literal) or one beyond a double's range (`1e999`)."""


_CANDIDATES = frozenset({tuple, list, _NonFinite})


def _number(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _parses_strictly(body: bytes) -> bool:
    """True when msgspec (strict RFC 8259, doubles only) reads `body` and keeps every key; False
    when it may not — a repeated key, a non-finite number, or a body msgspec cannot say of."""
    try:
        encoded = msgspec.json.encode(msgspec.json.decode(body))
    except (msgspec.MsgspecError, UnicodeDecodeError, OverflowError, ValueError):
        return False
    # A colon spelled `\\u003a` is written out as one by the re-encoding: counted exactly (an odd
    # run of backslashes before `u003a` is the escape), so such a body keeps the fast path.
    escaped = len(_ESCAPED_COLON.findall(body)) if any(e in body for e in _COLON_ESCAPES) else 0
    return encoded.count(b":") == body.count(b":") + escaped


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
    try:  # an object is read as a tuple of its (key, value) pairs, repeats kept; an array as a list
        document = json.loads(body, object_pairs_hook=tuple, parse_constant=_NonFinite, parse_float=_number)
    except (ValueError, RecursionError):
        return None
    return _first_problem(document)


def _first_problem(document: Any) -> JsonBodyProblem | None:
    """Pre-order, iterative: an object's own repeat before its members'. Only what can be a problem
    (a non-empty object or array, a non-finite number) is visited, each with a link to its parent
    (the dotted path is spelled only for the problem found), so a 2 MB body of small items costs
    about one json.loads more, not a path string and a generator per value."""
    pending: list[tuple[Any, Any]] = [(document, None)]  # (value, (parent's link, key) or None)
    while pending:
        value, link = pending.pop()
        kind = type(value)
        if kind is _NonFinite:
            return JsonBodyProblem("non_finite", _path(link) or "body", str(value))
        if kind is tuple:  # an object's (key, value) pairs
            if len(dict(value)) != len(value):
                seen: set[str] = set()
                for key, _item in value:
                    if key in seen:
                        return JsonBodyProblem("duplicate_key", _path((link, key)), key)
                    seen.add(key)
            for key, item in reversed(value):
                if (type(item) in _CONTAINERS and item) or type(item) is _NonFinite:
                    pending.append((item, (link, key)))
        elif kind is list and not _CANDIDATES.isdisjoint(map(type, value)):  # a list of scalars is skipped in C
            for index in range(len(value) - 1, -1, -1):
                item = value[index]
                if (type(item) in _CONTAINERS and item) or type(item) is _NonFinite:
                    pending.append((item, (link, index)))
    return None


def _path(link: Any) -> str:
    parts: list[str] = []
    while link is not None:
        link, key = link
        parts.append(str(key))
    return ".".join(reversed(parts))


def json_duplicate_key(body: bytes) -> tuple[str, str] | None:
    """(dotted path, key) of the first key a JSON body repeats within one object, or None."""
    problem = json_body_problem(body)
    return (problem.field, problem.token) if problem is not None and problem.kind == "duplicate_key" else None
