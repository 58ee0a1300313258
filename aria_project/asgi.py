"""ASGI entry point: HTTP through Django, WebSockets through Channels (session auth, origin check).

Once the application is built, what it has loaded (modules, models, URL patterns, settings) is
moved out of the cyclic garbage collector's reach (`gc.freeze()`): it lives as long as the process,
and a full collection no longer walks it. A full collection of a started server took 70–450 ms,
every socket's deliveries stalled for it, and one falls due whenever many objects are created at
once (500 sockets connecting after a restart, a reconnect burst).
"""

import gc
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.core.asgi import get_asgi_application
from django.urls import get_resolver

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

# Everything loaded so far lives as long as the process: out of the collector's walks (see above).
# The URL patterns are loaded first, as the first request would load them.
get_resolver().url_patterns  # noqa: B018
gc.collect()
gc.freeze()
