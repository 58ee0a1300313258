import os

import pytest
from django.contrib.auth.models import Group, User

from core.access import ADMIN, APPROVER, OPERATOR


def _user(username: str, *scopes: str, **extra) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username, **extra)
    for scope in scopes:
        group, _ = Group.objects.get_or_create(name=scope)
        user.groups.add(group)
    return user


@pytest.fixture
def make_user(db):
    return _user


@pytest.fixture
def operator(db) -> User:
    return _user("olga", OPERATOR)


@pytest.fixture
def approver(db) -> User:
    return _user("april", APPROVER)


@pytest.fixture
def admin_user(db) -> User:
    return _user("adam", ADMIN)


def pytest_collection_modifyitems(config, items):
    """Integration tests need PostgreSQL and Redis: skipped unless DATABASE_URL and REDIS_URL are set."""
    if os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL"):
        return
    skip = pytest.mark.skip(reason="needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    for item in items:
        if "integration" in item.keywords:
            item.add_marker(skip)
