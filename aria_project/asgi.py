"""ASGI entry point: HTTP through Django, WebSockets through Channels (session auth, origin check)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.core.asgi import get_asgi_application

from core.direct_send import keep_server_send

django_asgi_app = get_asgi_application()

from aria_project.routing import http_routes, websocket_urlpatterns  # noqa: E402
from core.socket_auth import SocketAuthMiddleware  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": http_routes(django_asgi_app),
        # keep_server_send: /ws/events writes event frames below the session wrapper (core.direct_send).
        # Channels' AuthMiddlewareStack, with the user looked up off the thread-sensitive thread.
        "websocket": AllowedHostsOriginValidator(
            keep_server_send(
                CookieMiddleware(SessionMiddleware(SocketAuthMiddleware(URLRouter(websocket_urlpatterns))))
            )
        ),
    }
)
