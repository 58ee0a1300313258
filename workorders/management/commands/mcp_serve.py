"""Serve ARIA's capabilities as MCP tools over stdio (for desktop MCP clients).

    python manage.py mcp_serve --token aria_…        # or ARIA_MCP_TOKEN=aria_…
    python manage.py mcp_serve --user operator       # local use by a trusted shell user

The identity decides the tools exactly as over HTTP: read tools always, mutate tools only for an
operator, gated never.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.auth import user_for_token
from workorders.mcp_server import serve_stdio


class Command(BaseCommand):
    help = "Serve ARIA's capabilities as MCP tools over stdio, acting as the token's (or --user's) user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--token", default="", help="API bearer token (default: $ARIA_MCP_TOKEN).")
        parser.add_argument("--user", default="", help="Act as this username instead of a token's user.")

    def handle(self, *args: Any, **options: Any) -> None:
        token = options["token"] or os.environ.get("ARIA_MCP_TOKEN", "")
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"], is_active=True).first()
            if user is None:
                raise CommandError(f"No active user {options['user']!r}.")
        elif token:
            user = user_for_token(token)
            if user is None:
                raise CommandError("The token is unknown, revoked or its user inactive.")
        else:
            raise CommandError("Give --token (or ARIA_MCP_TOKEN) or --user.")
        anyio.run(serve_stdio, user)
