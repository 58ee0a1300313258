"""Kernel pages (the live event feed, sign-in lockout) and the health endpoints.

/healthz answers when the process serves requests. /readyz checks what a request needs: the
database (SELECT 1), the channel layer (send/receive round trip on a fresh channel) and the
Celery broker (a connection); 200 when every check passes, else 503, with each check's status.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable

from asgiref.sync import sync_to_async
from celery import current_app as celery_app
from channels.layers import get_channel_layer
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from core.access import SCOPES, user_scopes
from core.models import Event

CHECK_TIMEOUT_SECONDS = 3.0
# The event feed starts with this many recent events, replayed through ?after=.
RECENT_EVENTS = 50


@login_required
def event_feed(request: HttpRequest) -> HttpResponse:
    """The raw live event feed (the Control Room at "/" is workorders' page): for people with a role
    in ARIA, as its socket is (/ws/events refuses a user with no scope)."""
    if not user_scopes(request.user) & set(SCOPES):
        raise PermissionDenied("The event feed needs a role in ARIA (operator, approver or admin).")
    latest = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
    context = {"title": "Live events", "replay_after": max(latest - RECENT_EVENTS, 0)}
    return render(request, "core/control_room.html", context)


def login_lockout(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """django-axes' answer once a username/address pair is locked out (AXES_LOCKOUT_CALLABLE):
    429 with Retry-After; JSON for an API client, else the sign-in page saying why."""
    from axes.helpers import get_cool_off  # lazy: axes' helpers need its app ready

    cool_off = get_cool_off(request)
    retry_after = max(1, int(cool_off.total_seconds())) if cool_off else None
    minutes = max(1, round(retry_after / 60)) if retry_after else None
    detail = "Too many failed sign-ins for this account from this address. " + (
        f"Try again in {minutes} min." if minutes else "Ask an administrator to unlock it."
    )
    headers = {"Retry-After": str(retry_after)} if retry_after else {}
    accept = request.headers.get("Accept", "")
    if "text/html" not in accept and ("json" in accept or request.headers.get("X-Requested-With") == "XMLHttpRequest"):
        body = {"detail": detail, "code": "throttled", "retry_after": retry_after}
        return JsonResponse(body, status=429, headers=headers)
    context = {"form": AuthenticationForm(request), "lockout": detail, "next": request.POST.get("next", "")}
    response = render(request, "registration/login.html", context, status=429)
    for name, value in headers.items():
        response[name] = value
    return response


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        if cursor.fetchone() != (1,):
            raise RuntimeError("SELECT 1 returned an unexpected row")


async def _check_channel_layer() -> None:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")
    channel = await layer.new_channel("readyz.")
    nonce = uuid.uuid4().hex
    await layer.send(channel, {"type": "readyz.ping", "nonce": nonce})
    message = await layer.receive(channel)
    if message.get("nonce") != nonce:
        raise RuntimeError("channel layer returned a different message")


def _check_broker() -> None:
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=CHECK_TIMEOUT_SECONDS)


async def _run_check(check: Callable[[], Awaitable[None]]) -> dict:
    started = time.perf_counter()
    try:
        await asyncio.wait_for(check(), timeout=CHECK_TIMEOUT_SECONDS)
    except Exception as exc:
        detail = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        return {"status": "fail", "detail": detail[:300], "ms": round((time.perf_counter() - started) * 1000, 1)}
    return {"status": "ok", "ms": round((time.perf_counter() - started) * 1000, 1)}


async def readyz(request: HttpRequest) -> JsonResponse:
    checks = {
        "database": sync_to_async(_check_database, thread_sensitive=True),
        "channel_layer": _check_channel_layer,
        "broker": sync_to_async(_check_broker, thread_sensitive=False),
    }
    results = dict(zip(checks, await asyncio.gather(*(_run_check(c) for c in checks.values())), strict=True))
    ready = all(r["status"] == "ok" for r in results.values())
    return JsonResponse({"status": "ok" if ready else "fail", "checks": results}, status=200 if ready else 503)
