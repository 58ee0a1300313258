"""Who may write sentinel's governance rows in the admin: a signal's limits and enabled flag, a cell
(onboarding_complete off stops every alarm of its signals) and the connectors (where plant data comes from). Reading them follows the model's view permission (the
approver's console shows them); adding, changing or deleting needs the admin scope as well as the
model permission, as the assistant's runtime settings do — never Django model permissions alone."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from core.admin import admin_staff


class AdminScopeWritesMixin:
    """Add, change and delete need the admin scope (`core.admin.admin_staff`) and the permission."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return admin_staff(request) and super().has_add_permission(request, *args)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_staff(request) and super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_staff(request) and super().has_delete_permission(request, obj)  # type: ignore[misc]
