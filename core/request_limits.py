"""Bounds on what an API request body may be, checked before authentication and before any parser.

This middleware sits ahead of the session and authentication middleware, so whoever sends a body
gets these checks — and only these, each one pass in C over bytes already read (a 2 MB body: a
few ms): every unsafe request under /api/ is refused with a JSON error when its Content-Length is
not a number (400), when its body is larger than `ARIA_API_MAX_BODY_BYTES` (413 `payload_too_large`,
before a byte of it is read when Content-Length says so; multipart uploads have their own, larger
cap `ARIA_API_MAX_UPLOAD_BYTES`), when it is not plain UTF-8 (a BOM, UTF-16 or UTF-32: 400
`invalid_json`) or when a JSON body nests deeper than `ARIA_API_MAX_JSON_DEPTH` (400 `too_deep`).
The depth is measured without recursion and without parsing: strings are cut out with one regex
and the running bracket depth is summed in C, so a 100,000-deep body costs one pass.

A NUL character in the path or the query string is refused here too (422 `invalid`): PostgreSQL can
store it neither in text nor in jsonb, so it would fail deep inside a write instead of at the door.

What takes a parse — a key repeated in one object, a number JSON has not, a `\\u0000` in a JSON
string, each named by its dotted path — runs after authentication, where the API reads the body
(`core.json_body`): a hostile body costs seconds of CPU to walk, which an anonymous client must not
be able to spend. The depth bound checked here is what makes that later parse safe.
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

from core.errors import DomainError, InvalidInput, InvalidJson, PayloadTooLarge, TooDeep

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
        if not declared:  # sent without a length (chunked, under ASGI): its size is known once read
            if len(request.body) > limit:
                return payload_too_large(limit)
        body = form_body_read_as_json(request)
        error = door_refusal(body) if body is not None else None
        return error_response(error) if error is not None else None
    try:
        body = request.body
    except RequestDataTooBig:
        return payload_too_large(limit)
    if len(body) > limit:  # a body sent without (or with a wrong) Content-Length
        return payload_too_large(limit)
    error = door_refusal(body)
    return error_response(error) if error is not None else None


def form_body_read_as_json(request: HttpRequest) -> bytes | None:
    """A form's body is Django's to parse (its own limits apply), but ninja's parser and the routes
    that read `request.body` read JSON whatever the content type says: a JSON body labelled a form
    is read here and gets the JSON checks (the door's and, after authentication, `core.json_body`'s).
    None for a real form, or one declared beyond Django's in-memory cap, which is streamed, never
    read as JSON (`aria_project.api.JsonObjectParser` checks such a body it parses). A body of no
    declared length is read too: under ASGI (daphne, uvicorn) a chunked one arrives whole (the
    door has bounded its size), and the signals ingest or a step's stop read it as JSON; under
    WSGI it reads as empty."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    if declared > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        return None
    body = request.body
    return body if _looks_like_json(body) else None


def _looks_like_json(body: bytes) -> bool:
    return body.lstrip()[:1] in (b"{", b"[") or not _plain_utf8(body)


def _plain_utf8(body: bytes) -> bool:
    """False for a body json.loads(bytes) reads through a BOM, or as UTF-16 or UTF-32."""
    return not body.startswith(codecs.BOM_UTF8) and json.detect_encoding(body) == "utf-8"


def _valid_utf8(body: bytes) -> bool:
    """The bytes decode as UTF-8 (one pass in C; ~1 ms for 2 MB)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def door_refusal(body: bytes) -> DomainError | None:
    """Why the door refuses a JSON body (not plain UTF-8, or nested too deep), or None. One pass in
    C over the bytes: it runs before authentication. The checks that parse run after it
    (`core.json_body`), and rely on it: a body it passed is UTF-8 and shallow enough to parse."""
    if not _plain_utf8(body) or not _valid_utf8(body):
        # json.loads(bytes) reads a BOM, UTF-16 and UTF-32 (RFC 8259 §8.1: UTF-8, no BOM); the
        # checks read bytes as UTF-8, so such a body would pass them unread. Bytes that are not
        # UTF-8 at all (b"\xff") are refused here too, not only by the routes that decode them:
        # a route that takes no body would otherwise act on a request carrying one.
        return InvalidJson("The request body is not valid JSON.")  # as the parser answers any other
    if body.lstrip()[:1] in (b"{", b"["):
        max_depth = getattr(settings, "ARIA_API_MAX_JSON_DEPTH", DEFAULT_MAX_JSON_DEPTH)
        if json_nesting_depth(body) > max_depth:
            return TooDeep(f"The JSON body nests deeper than {max_depth} levels.", limit=max_depth)
    return None


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
