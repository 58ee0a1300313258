"""Published prompts: versions and aliases; moving `production` is the rollback (approver)."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Router, Schema, Status

from assistant.models import PromptAlias, PromptVersion
from assistant.services.publish import prompt_alias_move, prompt_alias_remove
from core.access import APPROVER, OPERATOR, require_scopes

router = Router(tags=["assistant"])


class PromptVersionOut(Schema):
    name: str
    version: int
    text: str
    variables: list[str]
    draft_id: int | None
    created: datetime


class AliasOut(Schema):
    name: str
    alias: str
    version: int


class AliasIn(Schema):
    version: int


def _alias_out(alias: PromptAlias) -> dict:
    return {"name": alias.name, "alias": alias.alias, "version": alias.version.version}


@router.get("/prompts/{name}/versions", response=list[PromptVersionOut])
def prompt_versions(request: HttpRequest, name: str) -> list:
    require_scopes(request.user, OPERATOR)
    return list(PromptVersion.objects.filter(name=name))


@router.get("/prompts/aliases", response=list[AliasOut])
def prompt_aliases(request: HttpRequest) -> list[dict]:
    require_scopes(request.user, OPERATOR)
    return [_alias_out(a) for a in PromptAlias.objects.select_related("version")]


@router.put("/prompts/{name}/aliases/{alias}", response=AliasOut)
def move_alias(request: HttpRequest, name: str, alias: str, payload: AliasIn) -> dict:
    require_scopes(request.user, APPROVER)
    return _alias_out(prompt_alias_move(name=name, version=payload.version, actor=request.user, alias=alias))


@router.delete("/prompts/{name}/aliases/{alias}", response={204: None})
def remove_alias(request: HttpRequest, name: str, alias: str) -> Status:
    """Back to the built-in prompt (the rollback when only one version was ever published)."""
    require_scopes(request.user, APPROVER)
    prompt_alias_remove(name=name, alias=alias, actor=request.user)
    return Status(204, None)
