"""Bounds on what an API request body may be, checked before any view parses it.

Every unsafe request under /api/ is refused with a JSON error before a parser sees it when its body
is larger than `ARIA_API_MAX_BODY_BYTES` (413 `payload_too_large`; multipart uploads have their own,
larger cap `ARIA_API_MAX_UPLOAD_BYTES`) or when a JSON body nests deeper than `ARIA_API_MAX_JSON_DEPTH`
(400 `too_deep`), or when a JSON object in it names a key twice (400 `duplicate_key`, see
`core.json_keys`) or it carries a number JSON has not (`NaN`, `Infinity`, `1e999`: 422 `invalid`). The depth is measured without recursion and without parsing: strings are cut out
with one regex and the running bracket depth is summed in C, so a 100,000-deep body costs one pass.

Text carrying a NUL character (`\u0000` in a JSON string, `%00` in the path or query) is refused with
422 `invalid`: PostgreSQL can store it neither in text nor in jsonb, so it would fail deep inside a
write instead of at the door.
"""

from __future__ import annotations

import codecs
import json
import re
from array import array
from collections.abc import Awaitable, Callable
from itertools import accumulate

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

from core.errors import DomainError, DuplicateKey, InvalidInput, InvalidJson, PayloadTooLarge, TooDeep
from core.json_keys import JsonBodyProblem, json_body_problem

API_PREFIX = "/api/"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_JSON_DEPTH = 64
# The furthest a list route pages in (`offset`'s `le`): beyond it a client should filter instead.
MAX_PAGE_OFFSET = 100_000

# A JSON string (escapes included), written so the regex engine never backtracks.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Every byte but the four brackets (bytes.translate deletes them in C: a regex took ~10 ms a 400 kB body).
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
# Opening brackets become +1, closing ones -1 (0xFF read as a signed byte).
_BRACKET_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
# `\u0000` preceded by an even number of backslashes (an odd number would escape the first one).
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def json_nesting_depth(body: bytes) -> int:
    """The deepest array/object nesting of a JSON text (0 for a scalar), brackets inside strings
    ignored. Malformed JSON gets a best-effort figure; the parser rejects it afterwards anyway."""
    # Without a backslash no string holds an escaped quote: the text between quotes alternates
    # outside, inside, outside… and a split drops the strings in C (a 300 kB ingest body: 7 → 1 ms).
    outside = b"".join(body.split(b'"')[::2]) if b"\\" not in body else _JSON_STRING.sub(b"", body)
    brackets = outside.translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    return max(0, max(accumulate(array("b", brackets.translate(_BRACKET_STEPS)))))


def nul_in_request_text(request: HttpRequest) -> str | None:
    """Where a NUL character arrives in the path or the query string ("path" or the parameter), or None."""
    if "\x00" in request.path:
        return "path"
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name.replace("\x00", "") or "query"
    return None


def error_response(error: DomainError) -> JsonResponse:
    return JsonResponse(error.as_body(), status=error.status_code)


def payload_too_large(limit: int) -> JsonResponse:
    return error_response(PayloadTooLarge(f"The request body is larger than {limit} bytes.", limit=limit))


FORM_CONTENT_TYPES = frozenset({"multipart/form-data", "application/x-www-form-urlencoded"})


def _is_form(request: HttpRequest) -> bool:
    return request.content_type in FORM_CONTENT_TYPES


def api_body_refusal(request: HttpRequest) -> HttpResponse | None:
    """The 4xx JSON response for a body this API will not read, or None when it is within bounds."""
    if not request.path.startswith(API_PREFIX):
        return None
    if (where := nul_in_request_text(request)) is not None:
        return error_response(InvalidInput("Text must not contain NUL characters.", field=where))
    if request.method not in BODY_METHODS:
        return None
    multipart = request.content_type == "multipart/form-data"
    limit = (
        getattr(settings, "ARIA_API_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES)
        if multipart
        else getattr(settings, "ARIA_API_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)
    )
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return error_response(DomainError("The Content-Length header is not a number.", field="Content-Length"))
    if declared > limit:  # refused before a byte of it is read
        return payload_too_large(limit)
    if _is_form(request):
        error = _form_body_refusal(request, declared)
        return error_response(error) if error is not None else None
    try:
        body = request.body
    except RequestDataTooBig:
        return payload_too_large(limit)
    if len(body) > limit:  # a body sent without (or with a wrong) Content-Length
        return payload_too_large(limit)
    error = json_text_refusal(body)
    return error_response(error) if error is not None else None


def _form_body_refusal(request: HttpRequest, declared: int) -> DomainError | None:
    """A form's body is Django's to parse (its own limits apply), but ninja's parser and the routes
    that read `request.body` read JSON whatever the content type says: a JSON body labelled a form
    gets the JSON checks. An upload beyond Django's in-memory cap is streamed, never read as JSON."""
    if not declared or declared > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        return None  # JsonObjectParser checks a form-labelled body it is asked to parse
    body = request.body
    if not _looks_like_json(body):
        return None
    return json_text_refusal(body)


def _looks_like_json(body: bytes) -> bool:
    return body.lstrip()[:1] in (b"{", b"[") or not _plain_utf8(body)


def _plain_utf8(body: bytes) -> bool:
    """False for a body json.loads(bytes) reads through a BOM, or as UTF-16 or UTF-32."""
    return not body.startswith(codecs.BOM_UTF8) and json.detect_encoding(body) == "utf-8"


def json_text_refusal(body: bytes) -> DomainError | None:
    """Why a JSON body is refused (not UTF-8, too deep, a repeated key, a non-finite number, a NUL),
    or None. The door applies it to every body (`_form_body_refusal` to a form-labelled one); the
    API's parser again to a form-labelled body the door could not read."""
    if not _plain_utf8(body):
        # json.loads(bytes) reads a BOM, UTF-16 and UTF-32 (RFC 8259 §8.1: UTF-8, no BOM); the
        # checks below read bytes as UTF-8, so such a body would pass them unread.
        return InvalidJson("The request body is not valid JSON.")  # as the parser answers any other
    if body.lstrip()[:1] in (b"{", b"["):
        max_depth = getattr(settings, "ARIA_API_MAX_JSON_DEPTH", DEFAULT_MAX_JSON_DEPTH)
        if json_nesting_depth(body) > max_depth:
            return TooDeep(f"The JSON body nests deeper than {max_depth} levels.", limit=max_depth)
        if (problem := json_body_problem(body)) is not None:  # after the depth check: parsing is safe
            return _refusal(problem)
    # The plain substring test first: the look-behind regex costs ~40 ms on a 400 kB body without one.
    if b"\\u0000" in body and _JSON_NUL.search(body):  # after the depth check: parsing it to name the field is safe now
        field = json_nul_field(body)
        return InvalidInput(f"{field}: text must not contain NUL characters (\\u0000).", field=field)
    return None


def _refusal(problem: JsonBodyProblem) -> DomainError:
    field, token = problem.field, problem.token
    if problem.kind == "duplicate_key":
        message = f"{field}: the key {token!r} appears more than once in one object; send each key once."
        return DuplicateKey(message, field=field, key=token)
    return InvalidInput(f"{field}: {token} is not a JSON number; send a finite number.", field=field)


def json_nul_field(body: bytes) -> str:
    """The dotted path of the first string (or object key) holding a NUL, e.g. `samples.3.name`;
    `body` when the body is not JSON or is the string itself."""
    try:
        document = json.loads(body)
    except ValueError:
        return "body"
    pending: list[tuple[str, object]] = [("", document)]
    while pending:  # iterative: no recursion whatever the shape
        path, value = pending.pop()
        if isinstance(value, str) and "\x00" in value:
            return path or "body"
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                child = f"{path}.{key}" if path else str(key)
                if "\x00" in key:
                    return child.replace("\x00", "\\u0000")
                pending.append((child, item))
        elif isinstance(value, list):
            pending.extend(
                (f"{path}.{index}" if path else str(index), item) for index, item in reversed(list(enumerate(value)))
            )
    return "body"


class ApiRequestLimitsMiddleware:
    """Applies `api_body_refusal` to every request; other requests pass through untouched."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if self.is_async:
            return self.__acall__(request)
        return api_body_refusal(request) or self.get_response(request)  # type: ignore[return-value]

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        # The ASGI handler has already spooled the body, so reading it here does no network I/O.
        return api_body_refusal(request) or await self.get_response(request)  # type: ignore[misc]
