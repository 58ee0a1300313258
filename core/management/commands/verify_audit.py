"""`manage.py verify_audit`: seal what is committed, walk the audit hash chain in seal order; report
OK (with how many records await their seal) or the first broken link (exit 1)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.audit import audit_check


class Command(BaseCommand):
    help = "Verify the audit trail's hash chain; exits non-zero at the first broken record."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-seal",
            action="store_true",
            help="Only read (e.g. on a replica): leave unsealed records unsealed and just count them.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        check = audit_check(seal=not options["no_seal"])
        broken = check.broken
        if broken is not None:
            raise CommandError(
                f"Audit chain broken at record #{broken.pk} ({broken.action} {broken.target_type}:{broken.target_id},"
                f" {broken.created_at:%Y-%m-%d %H:%M:%S}, position {broken.seal}): its content or link does not"
                " match the chain."
            )
        if not check.head_found:
            raise CommandError(
                "Audit chain broken at its end: the last sealed record the chain head names is missing or altered"
                " (the sealed tail was removed)."
            )
        unsealed = f"{check.unsealed} unsealed"
        if check.oldest_unsealed_at is not None:
            unsealed += f", the oldest from {check.oldest_unsealed_at:%Y-%m-%d %H:%M:%S}"
        self.stdout.write(self.style.SUCCESS(f"Audit chain OK ({check.sealed} records sealed, {unsealed})."))
