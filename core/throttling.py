"""Per-user rate limits and the daily model-token budget.

Rate limits are django-ninja's cache throttle (`ninja.throttling.SimpleRateThrottle`: a sliding
log of request times per key in Django's cache — Redis when REDIS_URL is set, else the process'
local memory), keyed per user and per scope, with the rate read from `settings.ARIA_RATES` at
each check so an admin's change (or a test's override) applies at once. Routes attach
`UserRateLimit(scope)` with ninja's `throttle=`; ninja answers 429 JSON with `Retry-After`.
Anything that is not a ninja route (the chat WebSocket, a mode chosen in the body) calls
`rate_limit(scope, user)`, the same throttle and the same cache keys, which raises `Throttled`.
The log is read, checked and written back, so each check holds a lock on its key (a redis-py
`Lock` when the cache is Redis, shared by every process; a process lock otherwise): requests
racing at the limit let exactly the limit through. A lock that cannot be had within
`LOCK_WAIT_SECONDS` refuses the request (fail closed) rather than counting it unguarded.

The token budget: with a real model provider, a user's model-backed turns stop once today's
recorded usage (AgentRun input + output tokens since 00:00 in TIME_ZONE) reaches
`settings.ARIA_DAILY_TOKEN_BUDGET` (0 = no budget). The fake engine costs nothing and is exempt.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db.models import F, Q, Sum
from django.http import HttpRequest
from django.utils import timezone
from ninja.throttling import BaseThrottle, SimpleRateThrottle

from core.access import stored_user
from core.errors import DomainError
from core.models import AgentRun

CHAT = "chat"  # operator chat and authoring session turns (WebSocket and REST)
COORDINATOR = "coordinator"  # coordinator turns (its route and the chat's coordinate mode)
DRAFT_TEST = "draft_test"  # running a draft's tests in the sandbox
DRAFT_REVIEW = "draft_review"  # a draft's agent review: the reviewer principal's model call
PLAN_CREATE = "plan_create"  # creating a goal-plan
SCOPES = (CHAT, COORDINATOR, DRAFT_TEST, DRAFT_REVIEW, PLAN_CREATE)
SCOPE_LABELS = {
    CHAT: "chat turns",
    COORDINATOR: "coordinator turns",
    DRAFT_TEST: "draft tests",
    DRAFT_REVIEW: "agent reviews",
    PLAN_CREATE: "new plans",
}
FAKE_PROVIDER = "fake"
LOCK_WAIT_SECONDS = 2.0
LOCK_HOLD_SECONDS = 5  # a check takes milliseconds; a holder that dies frees the key after this

logger = logging.getLogger(__name__)


class Throttled(DomainError):
    """429: a rate limit or the daily budget refused the request; `retry_after` in seconds."""

    status_code = 429
    code = "throttled"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code, retry_after=retry_after)
        self.retry_after = retry_after
        self.headers = {"Retry-After": str(retry_after)}


def rate_for(scope: str) -> str | None:
    """The configured rate of a scope ("20/m"), or None when that scope is not limited."""
    rate = (getattr(settings, "ARIA_RATES", {}) or {}).get(scope)
    if not rate or str(rate).strip().lower() in ("off", "none", "0"):
        return None
    return str(rate).strip()


class _ScopeRate(SimpleRateThrottle):
    """ninja's cache throttle for one scope, one check: built per check (it keeps state on self)."""

    cache_format = "aria_throttle_%(scope)s_%(ident)s"

    def __init__(self, scope: str) -> None:
        self.scope = scope
        super().__init__(rate_for(scope) or "")

    def get_rate(self) -> str | None:
        return rate_for(self.scope or "")

    def parse_rate(self, rate: str | None) -> tuple[int | None, int | None]:
        return super().parse_rate(rate or None)

    def get_cache_key(self, request: HttpRequest) -> str | None:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            ident = f"user{user.pk}"
        else:
            ident = f"ip{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: HttpRequest) -> bool:
        if self.num_requests is None:
            return True
        return super().allow_request(request)

    def wait(self) -> float | None:
        """Seconds until one more request fits, also when the rate was lowered below the log."""
        if self.num_requests is None or not self.history:
            return None
        # The log is newest first; one more fits once the num_requests-th newest entry expires.
        oldest_that_blocks = self.history[min(self.num_requests, len(self.history)) - 1]
        return max(self.duration - (self.now - oldest_that_blocks), 1.0)


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int = 0  # whole seconds, >= 1 when refused
    rate: str | None = None


def rate_check(scope: str, request_or_user: HttpRequest | AbstractBaseUser | AnonymousUser) -> RateDecision:
    """Count one request against `scope` for this user (or client address); never raises."""
    if isinstance(request_or_user, HttpRequest):
        request = request_or_user
    else:
        request = HttpRequest()
        request.user = stored_user(request_or_user) or AnonymousUser()
    throttle = _ScopeRate(scope)
    if throttle.num_requests is None:
        return RateDecision(True)
    with _key_locked(throttle.get_cache_key(request) or scope) as locked:
        if not locked:
            logger.warning("Rate-limit lock for %s not had in %ss: refused", scope, LOCK_WAIT_SECONDS)
            return RateDecision(False, retry_after=1, rate=throttle.rate)
        if throttle.allow_request(request):
            return RateDecision(True, rate=throttle.rate or None)
    return RateDecision(False, retry_after=math.ceil(throttle.wait() or 1), rate=throttle.rate)


_process_lock = threading.Lock()
_redis_clients: dict[str, redis.Redis] = {}


@contextmanager
def _key_locked(key: str) -> Iterator[bool]:
    """One check at a time per throttle key: across processes on Redis, in this process otherwise."""
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        with _process_lock:  # the local-memory cache is this process' alone
            yield True
        return
    location = str(settings.CACHES["default"]["LOCATION"]).split(",")[0]
    client = _redis_clients.get(location)
    if client is None:
        client = _redis_clients.setdefault(location, redis.Redis.from_url(location, socket_timeout=5))
    lock = client.lock(f"{cache.make_key(key)}:lock", timeout=LOCK_HOLD_SECONDS, blocking_timeout=LOCK_WAIT_SECONDS)
    if not lock.acquire():
        yield False
        return
    try:
        yield True
    finally:
        with suppress(redis.exceptions.LockError):  # held past LOCK_HOLD_SECONDS: it expired already
            lock.release()


def rate_limit(scope: str, user: AbstractBaseUser | AnonymousUser) -> None:
    """`rate_check`, raising `Throttled` (429, Retry-After) with a sentence naming the limit."""
    decision = rate_check(scope, user)
    if not decision.allowed:
        raise Throttled(
            f"Too many {SCOPE_LABELS.get(scope, scope)}: the limit is {decision.rate}. "
            f"Try again in {decision.retry_after} s.",
            retry_after=decision.retry_after,
        )


_last_wait: ContextVar[float | None] = ContextVar("aria_throttle_wait", default=None)


class UserRateLimit(BaseThrottle):
    """A ninja route throttle for one scope: `@router.post(..., throttle=UserRateLimit(CHAT))`.

    ninja keeps one instance per route and calls `wait()` right after a refused
    `allow_request()`; the wait travels in a ContextVar so concurrent requests never mix.
    """

    def __init__(self, scope: str) -> None:
        if scope not in SCOPES:
            raise ValueError(f"Unknown rate-limit scope {scope!r}; choose one of {SCOPES}.")
        self.scope = scope

    def allow_request(self, request: HttpRequest) -> bool:
        decision = rate_check(self.scope, request)
        _last_wait.set(None if decision.allowed else float(decision.retry_after))
        return decision.allowed

    def wait(self) -> float | None:
        return _last_wait.get()


# --- the daily token budget -----------------------------------------------------------------


def _start_of_today() -> datetime:
    now = timezone.localtime()
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def token_usage_today(user: AbstractBaseUser) -> int:
    """Model tokens (input + output) of today's agent runs this user pays for, fake engine excluded:
    their own runs, and runs they asked of another principal (`AgentRun.billed_to`: a draft's
    agent review runs as the reviewer, billed to its author)."""

    owner = stored_user(user)
    if owner is None:
        return 0
    total = (
        AgentRun.objects.filter(
            Q(billed_to=owner) | Q(billed_to__isnull=True, user=owner), started_at__gte=_start_of_today()
        )
        .exclude(engine=FAKE_PROVIDER)
        .aggregate(total=Sum(F("input_tokens") + F("output_tokens")))["total"]
    )
    return int(total or 0)


def token_budget_check(user: AbstractBaseUser, *, provider: str) -> None:
    """Refuse a model-backed turn (429, code `token_budget`) once today's usage reaches the budget.

    `provider` is the engine the turn would run on; the fake engine is exempt, as is a budget of 0.
    """
    budget = int(getattr(settings, "ARIA_DAILY_TOKEN_BUDGET", 0) or 0)
    if budget <= 0 or provider == FAKE_PROVIDER or not getattr(user, "is_authenticated", False):
        return
    used = token_usage_today(user)
    if used < budget:
        return
    resets = _start_of_today() + timedelta(days=1)
    retry_after = max(1, math.ceil((resets - timezone.localtime()).total_seconds()))
    raise Throttled(
        f"Your daily model budget of {budget} tokens is used up ({used} today). "
        f"It resets at {resets:%H:%M} {resets.tzname()}, in {retry_after // 3600} h {retry_after % 3600 // 60} min.",
        retry_after=retry_after,
        code="token_budget",
    )
