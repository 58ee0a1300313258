"""ASGI entry point: HTTP through Django, WebSockets through Channels (session auth, origin check)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from aria_project.routing import http_routes, websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": http_routes(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
