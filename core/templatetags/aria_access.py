"""Scope checks for templates: a page renders only the controls its user may use (an approver
without the operator scope is not shown a Send that always answers 403)."""

from django import template
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from core.access import has_scopes

register = template.Library()


@register.filter
def has_scope(user: AbstractBaseUser | AnonymousUser | None, scope: str) -> bool:
    """`{% if user|has_scope:"operator" %}` — the same decision core.access makes for the API."""
    return has_scopes(user, (scope,))
