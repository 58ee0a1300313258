"""`manage.py create_api_token <username> --name X`: prints the raw bearer token once."""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.tokens import api_token_create


class Command(BaseCommand):
    help = "Create an API bearer token for a user and print it once (only its hash is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="cli", help="A label for the token, e.g. the client using it.")

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(username=options["username"], is_active=True)
        except User.DoesNotExist:
            raise CommandError(f"No active user {options['username']!r}.") from None
        token, raw = api_token_create(user=user, name=options["name"])
        self.stderr.write(f"Token #{token.pk} {token.name!r} for {user.get_username()} (shown only once):")
        self.stdout.write(raw)
