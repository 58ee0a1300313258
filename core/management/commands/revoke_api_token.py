"""`manage.py revoke_api_token <id | aria_… raw token>`: a revoked token stops working at once."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.models import ApiToken
from core.tokens import api_token_revoke


class Command(BaseCommand):
    help = "Revoke an API token by id, by key prefix or by the raw token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("token", help="Token id, key prefix (as shown in the admin) or the raw token.")

    def handle(self, *args: Any, **options: Any) -> None:
        ref: str = options["token"]
        tokens = ApiToken.objects.select_related("user")
        if ref.isdigit():
            matches = list(tokens.filter(pk=int(ref)))
        elif ref.startswith(ApiToken.PREFIX) and len(ref) > 20:
            matches = list(tokens.filter(key_hash=ApiToken.hash_key(ref)))
        else:
            matches = list(tokens.filter(key_prefix=ref))
        if len(matches) != 1:
            raise CommandError(f"{'No' if not matches else 'More than one'} token matches {ref!r}.")
        token = matches[0]
        if api_token_revoke(token=token):
            self.stdout.write(f"Revoked token #{token.pk} {token.name!r} of {token.user.get_username()}.")
        else:
            self.stdout.write(f"Token #{token.pk} was already revoked.")
