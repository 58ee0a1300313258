"""The checks a JSON body gets once its caller is known: a repeated key, a non-finite number, a NUL,
a lone surrogate.

The door (`core.request_limits`) runs before authentication, so it keeps to checks that cost one
pass in C whoever sends the body: its size, its nesting depth, plain UTF-8, a NUL in the path or
query. Naming a repeated key (400 `duplicate_key`), a `NaN`/`Infinity`/`1e999` (422 `invalid`) or
the string holding a `\\u0000` or a lone `\\ud800`-`\\udfff` escape (422 `invalid`) takes a parse
and a walk in Python — on a hostile 2 MB body of nested small lists, seconds of CPU
(`bench/json_door.py`), which an anonymous client must not be able to make the server spend. So
they run where the API reads the body, after authentication (and a session's CSRF check):

- ninja's parser, `aria_project.api.JsonObjectParser`, for every route with a body parameter;
- the API-wide view decorator `aria_project.api.checked_json_body`, just before the view of a route
  that takes no body parameter — one that reads `request.body` itself (the signals ingest, a plan
  step's stop/skip) or ignores it (it is refused all the same, as the door used to).

Each request's body is checked once (`request_json_refusal` marks it). The answers are the door's
own: the same status, code, field and message, in the same order (repeat/non-finite before NUL),
and they still come before the route's own checks (scopes, lookups). The chat socket
(`assistant.consumers`) and the MCP endpoint (`workorders.mcp_server`) refuse a repeated key and a
non-finite number too, after their own authentication.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from django.http import HttpRequest

from core.errors import DomainError, DuplicateKey, InvalidInput
from core.json_keys import JsonBodyProblem, json_body_problem
from core.json_text import NUL_MESSAGE, SURROGATE_MESSAGE, has_lone_surrogate, text_field
from core.request_limits import BODY_METHODS, FORM_CONTENT_TYPES, door_refusal, form_body_read_as_json

# `\u0000` preceded by an even number of backslashes (an odd number would escape the first one).
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
# A surrogate escape (`\ud800`-`\udfff`), likewise not itself escaped. A pair of them is one
# character (how ASCII-only encoders write an emoji); one alone is no character at all: Python
# decodes it into a string that cannot be encoded, and PostgreSQL's jsonb and text refuse it — a
# 500 deep inside a write, where a free-form value (a KB patch, a plan's constraints) reached it.
_JSON_SURROGATE = re.compile(rb"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_CHECKED = "_aria_json_checked"


def json_problem_refusal(body: bytes) -> DomainError | None:
    """A repeated key (400 `duplicate_key`) or a non-finite number (422 `invalid`) of a JSON object or
    array body, naming its dotted path; None otherwise. Needs a body within the door's depth bound."""
    if body.lstrip()[:1] not in (b"{", b"["):
        return None
    problem = json_body_problem(body)
    return _refusal(problem) if problem is not None else None


def json_body_refusal(body: bytes) -> DomainError | None:
    """Why a body the door let in (plain UTF-8, within its depth bound) is refused once the caller is
    known: a repeated key, a non-finite number, then a NUL or a lone surrogate escape in a string;
    or None."""
    if (refusal := json_problem_refusal(body)) is not None:
        return refusal
    # The plain substring test first: the look-behind regex costs ~40 ms on a 400 kB body without one.
    if b"\\u0000" in body and _JSON_NUL.search(body):
        field = json_nul_field(body)
        return InvalidInput(f"{field}: {NUL_MESSAGE}", field=field)
    if b"\\u" in body and _JSON_SURROGATE.search(body):
        lone = _json_text_field(body, has_lone_surrogate)  # None: every escape has its pair
        if lone is not None:
            message = f"{lone}: {SURROGATE_MESSAGE}"
            return InvalidInput(message, field=lone)
    return None


def json_text_refusal(body: bytes) -> DomainError | None:
    """Every check a JSON body gets, the door's and the later ones, for a body the door did not read
    (a form-labelled one of no declared length, which ninja's parser reads as JSON all the same)."""
    return door_refusal(body) or json_body_refusal(body)


def request_json_refusal(request: HttpRequest) -> DomainError | None:
    """The refusal of this request's body, or None: checked once per request, and only a body the
    door read (a form that is not JSON, or is streamed, is Django's to parse)."""
    if getattr(request, _CHECKED, False) or request.method not in BODY_METHODS:
        return None
    mark_json_checked(request)
    if request.content_type in FORM_CONTENT_TYPES:
        body = form_body_read_as_json(request)
        return json_body_refusal(body) if body is not None else None
    return json_body_refusal(request.body)


def mark_json_checked(request: HttpRequest) -> None:
    setattr(request, _CHECKED, True)


def _refusal(problem: JsonBodyProblem) -> DomainError:
    field, token = problem.field, problem.token
    if problem.kind == "duplicate_key":
        message = f"{field}: the key {token!r} appears more than once in one object; send each key once."
        return DuplicateKey(message, field=field, key=token)
    return InvalidInput(f"{field}: {token} is not a JSON number; send a finite number.", field=field)


def json_nul_field(body: bytes) -> str:
    """The dotted path of the first string (or object key) holding a NUL, e.g. `samples.3.name`;
    `body` when the body is not JSON or is the string itself."""
    return _json_text_field(body, lambda text: "\x00" in text) or "body"


def _json_text_field(body: bytes, bad: Callable[[str], bool]) -> str | None:
    """The dotted path of the first string or object key that is `bad` (`body` for the body
    itself, the key written with its NUL escaped); None when there is none or the body is not JSON."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    path = text_field(document, bad)
    return None if path is None else path or "body"
