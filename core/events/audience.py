"""Who an ask is for: the users to name in `private_scope` beside its owner.

The approvers of a gated step are every active human holding the step's scope (the scope's
group, the admin group, or superuser — `core.access.user_scopes`), never a service account and
never the owner (separation of duties: they cannot decide their own ask). The list is taken when
the event is published: a copy is replayed to whoever was in it then.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from core.access import ADMIN, SCOPES


def scope_holder_ids(scope: str, *, besides: int | None = None) -> list[int]:
    """Ids of the active humans holding `scope`, in id order, `besides` left out. An empty or
    unknown scope name holds no one."""
    if scope not in SCOPES:
        return []
    holds = Q(is_superuser=True) | Q(groups__name__in={scope, ADMIN})
    users = get_user_model().objects.filter(holds, is_active=True, service_account__isnull=True)
    if besides is not None:
        users = users.exclude(pk=besides)
    return list(users.order_by("pk").values_list("pk", flat=True).distinct())
