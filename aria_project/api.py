"""The one NinjaAPI. Each app adds its router; domain errors map to one JSON error shape."""

import functools
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

import pydantic
from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.datastructures import MultiValueDict
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError, ValidationErrorContext
from ninja.params.models import BodyModel
from ninja.parser import Parser

from core.api import router as core_router
from core.auth import api_auth, session_or_token_required
from core.errors import DomainError, InvalidInput, InvalidJson, NotFound
from core.json_body import json_body_refusal, json_text_refusal, mark_json_checked, request_json_refusal
from core.openapi import document_error_responses
from core.request_limits import FORM_CONTENT_TYPES, payload_too_large

logger = logging.getLogger("aria.api")


class JsonObjectParser(Parser):
    """Every JSON body this API takes is an object (an optional one is left out, not sent as `null`);
    ninja's schemas read attributes, so a list, a number or null would otherwise pass as "all defaults".
    It runs after authentication, so it is where a body gets the checks that parse it (`core.json_body`:
    a repeated key, a non-finite number, a NUL), on top of the door's (`core.request_limits`: UTF-8,
    depth) — all of them for a form-labelled body the door could not read."""

    def parse_body(self, request: HttpRequest) -> Any:
        body = request.body
        form = request.content_type in FORM_CONTENT_TYPES  # ninja parses a JSON body whatever its content type
        mark_json_checked(request)
        if (refusal := json_text_refusal(body) if form else json_body_refusal(body)) is not None:
            raise refusal
        # UTF-8 without a byte-order mark (RFC 8259 §8.1), as the door read it: json.loads(bytes)
        # would also take a BOM, UTF-16 or UTF-32 — bodies the checks never saw.
        data = json.loads(body.decode("utf-8"))
        if not isinstance(data, dict):
            raise InvalidInput("The request body must be a JSON object.", field="body")
        return data

    def parse_querydict(self, data: MultiValueDict, list_fields: list[str], request: HttpRequest) -> dict[str, Any]:
        """A parameter the schema takes once (`?conversation=a`) given twice is a 422 naming it, not
        its last value read as if the first were never sent; a list parameter may repeat."""
        for key, values in data.lists():
            if key not in list_fields and len(values) > 1:
                raise InvalidInput(f"{key}: given {len(values)} times; it takes one value.", field=key)
        return super().parse_querydict(data, list_fields, request)


def checked_json_body(view: Callable[..., Any]) -> Callable[..., Any]:
    """Every operation's view: its body gets `core.json_body`'s checks once the caller is
    authenticated, when the parser has not (a route with no body parameter: one that reads
    `request.body` itself, like the signals ingest, or ignores it)."""

    @functools.wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if (refusal := request_json_refusal(request)) is not None:
            raise refusal
        return view(request, *args, **kwargs)

    return checked


class AriaAPI(NinjaAPI):
    def get_openapi_schema(self, **kwargs: Any) -> Any:
        """Each operation also documents the errors the handlers below answer with."""
        return document_error_responses(super().get_openapi_schema(**kwargs))

    def validation_error_from_error_contexts(self, error_contexts: list[ValidationErrorContext]) -> ValidationError:
        """A request with no body at all names the body's required fields (`comment`), as an empty
        object `{}` would, rather than the whole body as one unnamed missing field."""
        return super().validation_error_from_error_contexts([_body_as_empty_object(c) for c in error_contexts])


def _body_as_empty_object(context: ValidationErrorContext) -> ValidationErrorContext:
    model = context.model
    errors = context.pydantic_validation_error.errors()
    if not issubclass(model, BodyModel) or not all(e["type"] == "missing" and len(e["loc"]) == 1 for e in errors):
        return context
    try:
        model.model_validate({str(e["loc"][0]): {} for e in errors})
    except pydantic.ValidationError as exc:
        return ValidationErrorContext(pydantic_validation_error=exc, model=model)
    return context  # every field of the body has a default: the body itself was required


# The docs (/api/v1/docs, also /api/docs) and the schema are for signed-in users and token clients.
api = AriaAPI(
    title="ARIA API",
    version="1",
    auth=api_auth,
    urls_namespace="api",
    parser=JsonObjectParser(),
    docs_url="/docs",
    docs_decorator=session_or_token_required,
)
# "operation": around the view itself, after authentication and the parameters' parsing.
api.add_decorator(checked_json_body, mode="operation")

INVALID_JSON = InvalidJson("The request body is not valid JSON.")
_HTTP_CODES = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 429: "throttled"}


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    response = api.create_response(request, exc.as_body(), status=exc.status_code)
    for name, value in getattr(exc, "headers", {}).items():  # e.g. Retry-After on a 429 (core.throttling)
        response[name] = value
    return response


@api.exception_handler(AuthenticationError)
def authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(request, {"detail": "Authentication required.", "code": "not_authenticated"}, status=401)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """ninja's own errors in our shape; a body it could not parse is `invalid_json`."""
    if isinstance(exc.__cause__, DomainError):  # raised by the body parser
        return domain_error(request, exc.__cause__)
    if exc.status_code == 400 and isinstance(exc.__cause__, ValueError):  # JSON or UTF-8 decoding
        return domain_error(request, INVALID_JSON)
    body = {"detail": str(exc), "code": _HTTP_CODES.get(exc.status_code, "error")}
    return api.create_response(request, body, status=exc.status_code)


@api.exception_handler(Http404)
def http_404(request: HttpRequest, exc: Http404) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc) or "Not found.", "code": "not_found"}, status=404)


@api.exception_handler(PermissionDenied)
def permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc) or "Forbidden.", "code": "forbidden"}, status=403)


@api.exception_handler(SuspiciousOperation)
def suspicious_operation(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    """Django's refusals of a malformed request (too many fields, a body over its memory cap)."""
    if isinstance(exc, RequestDataTooBig):
        return payload_too_large(settings.ARIA_API_MAX_BODY_BYTES)
    return api.create_response(
        request, {"detail": "The request was refused as malformed.", "code": "bad_request"}, status=400
    )


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    """Anything unforeseen: logged with its traceback under an id the client can quote. Always JSON,
    never a traceback page, whatever DEBUG says."""
    error_id = str(uuid.uuid4())
    logger.error("API error %s on %s %s", error_id, request.method, request.path, exc_info=exc)
    body = {"detail": "Internal error.", "code": "server_error", "error_id": error_id}
    return api.create_response(request, body, status=500)


@csrf_exempt  # it changes nothing: a POST to an unknown path is a JSON 404, not Django's HTML CSRF page
def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Any /api/ path no route matched: JSON, not Django's HTML 404 page."""
    return JsonResponse(NotFound(f"No API endpoint at {request.path}.").as_body(), status=404)


@api.exception_handler(ValidationError)
def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = exc.errors
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "payload", "query", "path")]
    field = ".".join(loc) or None
    message = f"{field}: {first.get('msg')}" if field else str(first.get("msg", "Invalid input."))
    if field is None and first.get("type") == "missing" and first.get("loc", ())[:1] == ("body",):
        # no body at all, where every field has a default (an empty object would do)
        field, message = "body", "body: send a JSON object ({} for the defaults)."
    body = {"detail": message, "code": "invalid", "field": field, "errors": errors}
    return api.create_response(request, body, status=422)


api.add_router("/", core_router)


def _add_app_routers() -> None:
    from importlib import import_module
    from importlib.util import find_spec

    for app in ("sentinel", "workorders", "assistant", "orchestrator"):
        if find_spec(f"{app}.api"):
            module = import_module(f"{app}.api")
            api.add_router(getattr(module, "PREFIX", f"/{app}"), module.router)


_add_app_routers()
