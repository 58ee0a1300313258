"""A connector's endpoint is an address, never a credential: a user name or password written
into the URL (`opc.tcp://user:pw@host/`, `mqtt://user:pw@host`) is refused by the form and by the
sessions, and any endpoint shown (admin list, errors, events) is shown without it."""

from __future__ import annotations

from urllib.parse import urlsplit

CREDENTIALS_REFUSED = (
    "must not carry a user name or password: name the environment variables that hold them "
    "in username_env / password_env"
)


def carries_credentials(endpoint: str) -> bool:
    """True if the URL has user-info (`user@` or `user:password@`) before its host."""
    try:
        parts = urlsplit(endpoint.strip())
    except ValueError:
        return "@" in endpoint
    return "@" in parts.netloc


def endpoint_shown(endpoint: str) -> str:
    """The endpoint without its user-info, for pages, errors and events."""
    if not carries_credentials(endpoint):
        return endpoint
    try:
        parts = urlsplit(endpoint.strip())
    except ValueError:
        return "(endpoint hidden: it carries credentials)"
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"***@{host}").geturl()
