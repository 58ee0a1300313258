"""The service principal the maintenance agents act as."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import IntegrityError, transaction

from core.access import OPERATOR
from core.models import ServiceAccount

SYSTEM_USERNAME = "system"


def system_user() -> AbstractBaseUser:
    """Get or create the `system` service account (role system, operator scope)."""
    User = get_user_model()
    user = User.objects.filter(username=SYSTEM_USERNAME).first()
    if user is None:
        try:
            with transaction.atomic():
                user = User(username=SYSTEM_USERNAME, is_active=True)
                user.set_unusable_password()
                user.save()
        except IntegrityError:  # another worker created it first
            user = User.objects.get(username=SYSTEM_USERNAME)
    ServiceAccount.objects.get_or_create(
        user=user, defaults={"role": ServiceAccount.Role.SYSTEM, "description": "Maintenance agents"}
    )
    group, _ = Group.objects.get_or_create(name=OPERATOR)
    if not user.groups.filter(pk=group.pk).exists():
        user.groups.add(group)
        user.__dict__.pop("_aria_scopes", None)
    return user
