"""What a connector's settings must be, checked twice: by the admin form (an error naming the
field) and by the sessions at run time, because a row can predate a rule or be written by a
script. Each check returns the problem in words, or None.

- A topic filter follows MQTT 3.1.1 §4.7: `#` only as the last level and alone in it, `+` alone
  in its level, no NUL, not empty. paho raises `ValueError` for a bad one inside its network
  thread, where nobody sees it, so ARIA says it first.
- An endpoint names a host (`mqtt://` alone would leave the connector in error for good).
- An endpoint's port, when given, is 1..65535 (`urlsplit` turns `:0` into "no port", and the
  session would quietly use the default).
- Credentials are read only from environment variables named `ARIA_CONNECTOR_…`: an admin who
  could name any variable could have ARIA send `SECRET_KEY` or `DATABASE_URL` to a broker of
  their choosing as a user name or password. ARIA's own settings under that prefix
  (`ARIA_CONNECTOR_BACKLOG`, …) are not credentials either and are refused.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from django.conf import settings

CREDENTIAL_ENV_PREFIX = "ARIA_CONNECTOR_"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
MAX_TOPIC_FILTER_BYTES = 65_535


def topic_filter_problem(topic_filter: str) -> str | None:
    """Why `topic_filter` is not a valid MQTT subscription, or None."""
    if not topic_filter:
        return "an MQTT topic filter must not be empty"
    try:
        size = len(topic_filter.encode("utf-8"))
    except UnicodeEncodeError:
        return "an MQTT topic filter must be valid UTF-8"
    if size > MAX_TOPIC_FILTER_BYTES:
        return "an MQTT topic filter is at most 65,535 bytes"
    if "\x00" in topic_filter:
        return "an MQTT topic filter must not contain the NUL character"
    levels = topic_filter.split("/")
    for index, level in enumerate(levels):
        if "#" in level and (level != "#" or index != len(levels) - 1):
            return "'#' must be alone in the last level of an MQTT topic filter (e.g. plant/#)"
        if "+" in level and level != "+":
            return "'+' must be alone in its level of an MQTT topic filter (e.g. plant/+/vibration)"
    return None


def endpoint_port_problem(endpoint: str) -> str | None:
    """Why the port written in `endpoint` is not usable (outside 1..65535, not a number), or None
    when it is fine or absent (the kind's default port)."""
    try:
        port = urlsplit(endpoint.strip()).port
    except ValueError as error:
        return f"port must be a number from 1 to 65535 ({error})"
    if port is not None and not 1 <= port <= 65535:
        return f"port must be a number from 1 to 65535, not {port}"
    return None


def endpoint_host_problem(endpoint: str) -> str | None:
    """Why `endpoint` names no usable host (`mqtt://`, `opc.tcp://:4840/`), or None. A session
    refuses such a row at start; the admin form refuses it on save with the same words."""
    try:
        host = urlsplit(endpoint.strip()).hostname
    except ValueError:
        host = None  # a malformed port or IPv6 literal: the port check names it
    if not host or any(c.isspace() for c in host):
        return "must name a host: scheme://host[:port], e.g. mqtt://broker.plant:1883 or opc.tcp://plc-7:4840/"
    return None


def credential_env_problem(name: str) -> str | None:
    """Why ARIA must not read the environment variable `name` as a credential, or None."""
    if not _ENV_NAME.match(name):
        return "must be an environment variable name (letters, digits, _), not the secret"
    if not name.startswith(CREDENTIAL_ENV_PREFIX) or len(name) == len(CREDENTIAL_ENV_PREFIX):
        return (
            f"must start with {CREDENTIAL_ENV_PREFIX} (e.g. {CREDENTIAL_ENV_PREFIX}PLANT_MQTT_USER): "
            "credentials are read only from variables named for connectors, never from ARIA's own"
        )
    if hasattr(settings, name):
        return f"{name} is an ARIA setting, not a credential"
    return None


def credentials(username_env: str, password_env: str) -> tuple[str | None, str | None]:
    """The values of the named environment variables (the names are stored, never the values).
    ValueError, naming the field and the variable (never a value), when a name is not allowed or
    names a variable the connectors process does not have: a session then refuses to start
    instead of connecting with no credentials or with another variable's value."""
    values: list[str | None] = []
    for field, name in (("username_env", username_env), ("password_env", password_env)):
        if not name:
            values.append(None)
            continue
        problem = credential_env_problem(name)
        if problem:
            raise ValueError(f"{field} {name!r} refused: {problem}")
        if name not in os.environ:
            raise ValueError(f"{field} names {name}, which is not set in the connectors process")
        values.append(os.environ[name])
    return values[0], values[1]
