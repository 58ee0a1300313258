"""The domain error type. The one NinjaAPI maps it to a JSON body: {detail, field?, code, ...extra}."""

from typing import Any


class DomainError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code:
            self.code = code
        self.extra = extra

    def as_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": self.message, "code": self.code}
        if self.field:
            body["field"] = self.field
        body.update(self.extra)
        return body


class InvalidJson(DomainError):
    """The request body could not be parsed as JSON."""

    status_code = 400
    code = "invalid_json"


class DuplicateKey(DomainError):
    """A JSON object of the request body names one key twice (`field`: the key's dotted path)."""

    status_code = 400
    code = "duplicate_key"


class NotAuthenticated(DomainError):
    status_code = 401
    code = "not_authenticated"


class Forbidden(DomainError):
    status_code = 403
    code = "forbidden"


class NotFound(DomainError):
    status_code = 404
    code = "not_found"


class Conflict(DomainError):
    """An illegal state transition or a concurrent change. `allowed` lists the legal moves."""

    status_code = 409
    code = "conflict"


class InvalidInput(DomainError):
    status_code = 422
    code = "invalid"


class PayloadTooLarge(DomainError):
    status_code = 413
    code = "payload_too_large"


class TooDeep(DomainError):
    """A JSON body nested deeper than the API reads."""

    status_code = 400
    code = "too_deep"
