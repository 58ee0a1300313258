"""WebSocket routes and extra ASGI HTTP mounts (the MCP endpoint) of every app."""

from importlib import import_module
from importlib.util import find_spec

from django.urls import path

from core.events.stream import EventsConsumer

websocket_urlpatterns = [path("ws/events", EventsConsumer.as_asgi())]
for _app in ("sentinel", "workorders", "assistant", "orchestrator"):
    if find_spec(f"{_app}.routing"):
        websocket_urlpatterns += import_module(f"{_app}.routing").websocket_urlpatterns


def http_routes(django_app):
    """Django for HTTP; apps may mount raw ASGI apps under a path prefix (e.g. /mcp)."""
    mounts = []
    for app in ("sentinel", "workorders", "assistant", "orchestrator"):
        if find_spec(f"{app}.routing"):
            mounts += getattr(import_module(f"{app}.routing"), "asgi_mounts", [])
    if not mounts:
        return django_app

    async def router(scope, receive, send):
        for prefix, asgi_app in mounts:
            if scope["path"] == prefix or scope["path"].startswith(prefix + "/"):
                return await asgi_app(scope, receive, send)
        return await django_app(scope, receive, send)

    return router
