"""Scopes and owner scoping: the one place that decides who may do what, and see which rows."""

from collections.abc import Iterable
from typing import TypeVar

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, PermissionsMixin, User
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, Q, QuerySet

from core.errors import Forbidden, NotAuthenticated, NotFound

OPERATOR = "operator"
APPROVER = "approver"
ADMIN = "admin"
SCOPES = (OPERATOR, APPROVER, ADMIN)

M = TypeVar("M", bound=Model)


def user_scopes(user: AbstractBaseUser | AnonymousUser | None) -> frozenset[str]:
    """Scopes are Django groups named after them; admin (or superuser) holds every scope."""
    if user is None or not user.is_authenticated or not user.is_active or not isinstance(user, PermissionsMixin):
        return frozenset()
    cached = getattr(user, "_aria_scopes", None)
    if cached is not None:
        return cached
    names = set(user.groups.filter(name__in=SCOPES).values_list("name", flat=True))
    if user.is_superuser or ADMIN in names:
        names = set(SCOPES)
    scopes = frozenset(names)
    user._aria_scopes = scopes  # type: ignore[attr-defined]  # cached on this instance, like Django's perm cache
    return scopes


def stored_user(user: AbstractBaseUser | AnonymousUser | None) -> User | None:
    """The user to keep in a row's user foreign key (settings.AUTH_USER_MODEL): None for nobody
    or an anonymous visitor."""
    return user if isinstance(user, get_user_model()) else None


def is_admin(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    return ADMIN in user_scopes(user)


def is_service_account(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    return bool(user and user.is_authenticated and hasattr(user, "service_account"))


def has_scopes(user: AbstractBaseUser | AnonymousUser | None, required: Iterable[str]) -> bool:
    """True when the user holds every required scope. An unknown scope name denies."""
    required = set(required)
    if required - set(SCOPES):
        return False
    return required <= user_scopes(user)


def require_scopes(user: AbstractBaseUser | AnonymousUser | None, *required: str) -> None:
    if user is None or not user.is_authenticated:
        raise NotAuthenticated("Authentication required.")
    if not has_scopes(user, required):
        missing = sorted(set(required) - user_scopes(user))
        raise Forbidden(f"Requires scope: {', '.join(missing) or ', '.join(required)}.", code="missing_scope")


def require_any_scope(user: AbstractBaseUser | AnonymousUser | None, *allowed: str) -> None:
    """Raise unless the user holds at least one of the allowed scopes (401 anonymous, 403 other).
    For reads shared by several roles, e.g. the Control Room for operators and approvers."""
    if user is None or not user.is_authenticated:
        raise NotAuthenticated("Authentication required.")
    if not user_scopes(user) & set(allowed):
        raise Forbidden(f"Requires one of the scopes: {', '.join(allowed)}.", code="missing_scope")


def owned_by(queryset: QuerySet[M], user: AbstractBaseUser, *, owner_field: str = "owner") -> QuerySet[M]:
    """Rows the user may see: their own, or all of them for an admin."""
    if is_admin(user):
        return queryset
    return queryset.filter(**{owner_field: user})


def admin_ids() -> list[int]:
    """Ids of the users `owned_by` shows every row (`is_admin`: active, and superuser or in the admin
    group), in id order: who may see every owner's object, e.g. the recipients of a private event
    about one (a plan's `plan_updated`)."""
    admins = get_user_model().objects.filter(Q(is_superuser=True) | Q(groups__name=ADMIN), is_active=True)
    return list(admins.order_by("pk").values_list("pk", flat=True).distinct())


def get_owned_or_404(queryset: QuerySet[M], user: AbstractBaseUser, *, owner_field: str = "owner", **lookup) -> M:
    """Another owner's object is indistinguishable from a missing one: 404, admins bypass."""
    try:
        return owned_by(queryset, user, owner_field=owner_field).get(**lookup)
    except ObjectDoesNotExist:
        raise NotFound(f"{str(queryset.model._meta.verbose_name).capitalize()} not found.") from None
