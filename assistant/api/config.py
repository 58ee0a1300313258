"""GET/PATCH /assistant/config: engines, bounds, policies and readiness.

Anyone with a scope reads them; only an admin changes them (governance settings, audited)."""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import ConfigDict, create_model

from assistant.conf import AssistantConfig
from assistant.services.config import config_snapshot, config_update
from core.access import ADMIN, APPROVER, OPERATOR, require_any_scope, require_scopes
from core.auth import BearerTokenAuth, SessionCookieAuth

router = Router(tags=["assistant"])


# Every setting optional, with its bounds (a value past a hard maximum is a 422 naming the
# setting); unknown keys are a 422. Values are validated again on the merged config.
class _PatchBase(Schema):
    model_config = ConfigDict(extra="forbid")


def _bounded(annotation: Any, metadata: list[Any]) -> Any:
    return Annotated[(annotation, *metadata)] if metadata else annotation


ConfigPatch = create_model(
    "AssistantConfigPatch",
    __base__=_PatchBase,
    **{
        name: (_bounded(field.annotation, field.metadata) | None, None)
        for name, field in AssistantConfig.model_fields.items()
    },
)


@router.get("/config")
def get_config_route(request: HttpRequest) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)
    return config_snapshot(viewer=request.user)


class AdminBearerAuth(BearerTokenAuth):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        return _admin_only(super().authenticate(request, token))


class AdminSessionAuth(SessionCookieAuth):
    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        return _admin_only(super().authenticate(request, key))


def _admin_only(user: Any) -> Any:
    if user:
        require_scopes(user, ADMIN)  # 403 before the body is read: a refused caller learns nothing
    return user


@router.patch("/config", auth=[AdminBearerAuth(), AdminSessionAuth()])
def patch_config(request: HttpRequest, payload: ConfigPatch) -> dict[str, Any]:  # type: ignore[valid-type]
    require_scopes(request.user, ADMIN)
    config_update(actor=request.user, changes=payload.model_dump(exclude_unset=True))
    return config_snapshot(viewer=request.user)
