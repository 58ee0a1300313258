"""Rate limits under racing requests (core.throttling): the sliding log is read, checked and
written back, so each check holds a lock on its key — exactly the limit gets through."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.conf import settings
from django.test import override_settings

from core.throttling import rate_check
from tests.security.test_rate_limits import PRODUCTION_RATES


def _race(user, n: int = 16) -> int:
    start = Barrier(n)

    def one(_: int) -> bool:
        start.wait()
        return rate_check("draft_test", user).allowed

    with ThreadPoolExecutor(n) as pool:
        return sum(pool.map(one, range(n)))


@pytest.mark.django_db(transaction=True)
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "draft_test": "5/m"})
def test_racing_requests_at_the_limit_let_exactly_the_limit_through(operator):
    assert _race(operator) == 5
    assert rate_check("draft_test", operator).allowed is False


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_racing_requests_on_the_shared_redis_cache_let_exactly_the_limit_through(operator):
    """Production keeps the log in Redis, shared by every web process: it is read, checked and
    written back, so without one critical section per key, requests racing at the boundary all
    read the same log and all pass (16 of 5 got through before the lock)."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL")
    redis_cache = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": settings.REDIS_URL,
            "KEY_PREFIX": f"race-{uuid.uuid4().hex}",  # this test's own keys; nothing is flushed
        }
    }
    with override_settings(CACHES=redis_cache, ARIA_RATES={**PRODUCTION_RATES, "draft_test": "5/m"}):
        assert _race(operator) == 5
        assert rate_check("draft_test", operator).allowed is False
