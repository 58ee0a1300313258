"""Kernel routes: who am I."""

from django.http import HttpRequest
from ninja import Router, Schema

from core.access import is_service_account, stored_user, user_scopes
from core.auth import auth_method
from core.errors import NotAuthenticated

router = Router(tags=["access"])


class MeOut(Schema):
    id: int
    username: str
    display_name: str
    scopes: list[str]
    is_service_account: bool
    auth: str


@router.get("/me", response=MeOut)
def me(request: HttpRequest) -> dict:
    user = stored_user(request.user)
    if user is None:  # the API's auth already refuses anonymous callers
        raise NotAuthenticated("Authentication required.")
    return {
        "id": user.pk,
        "username": user.get_username(),
        "display_name": user.get_full_name() or user.get_username(),
        "scopes": sorted(user_scopes(user)),
        "is_service_account": is_service_account(user),
        "auth": auth_method(request),
    }
