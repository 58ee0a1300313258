"""`manage.py verify_audit`: seal what is committed, walk the audit hash chain in seal order; report
OK (with how many records await their seal, and how many are not yet under the current key) or the
first broken link (exit 1). `--reseal` re-seals a chain that verifies under the current key
(records sealed before keyed sealing, or under a previous key); it refuses one that does not."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.audit import AuditChainError, audit_check, audit_reseal


class Command(BaseCommand):
    help = "Verify the audit trail's hash chain; exits non-zero at the first broken record."

    def add_arguments(self, parser: CommandParser) -> None:
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--no-seal",
            action="store_true",
            help="Only read (e.g. on a replica): leave unsealed records unsealed and just count them.",
        )
        mode.add_argument(
            "--reseal",
            action="store_true",
            help="After it verifies, re-seal the chain under ARIA_AUDIT_KEY (v1 records, records under a "
            "previous key); a chain that does not verify is refused. Safe to run again.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        check = audit_check(seal=not options["no_seal"])
        broken = check.broken
        if broken is not None:
            raise CommandError(
                f"Audit chain broken at record #{broken.pk} ({broken.action} {broken.target_type}:{broken.target_id},"
                f" {broken.created_at:%Y-%m-%d %H:%M:%S}, position {broken.seal}): its content, link or keyed digest"
                " does not match the chain."
            )
        if not check.head_found:
            raise CommandError(
                "Audit chain broken at its end: the last sealed record the chain head names is missing or altered"
                " (the sealed tail was removed)."
            )
        if not check.head_keyed:
            raise CommandError(
                "Audit chain broken at its head: the head is missing or its MAC does not verify under ARIA_AUDIT_KEY"
                " or ARIA_AUDIT_PREVIOUS_KEYS: rewritten without the key, or sealed under a key no longer configured"
                " (after changing ARIA_AUDIT_KEY, list the old one in ARIA_AUDIT_PREVIOUS_KEYS — `SECRET_KEY` for the"
                " one derived from it — and run `verify_audit --reseal`)."
            )
        if options["reseal"]:
            try:
                resealed = audit_reseal()
            except AuditChainError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(self.style.SUCCESS(f"Re-sealed {resealed} records under the current audit key."))
            check = audit_check(seal=False)
        unsealed = f"{check.unsealed} unsealed"
        if check.oldest_unsealed_at is not None:
            unsealed += f", the oldest from {check.oldest_unsealed_at:%Y-%m-%d %H:%M:%S}"
        self.stdout.write(self.style.SUCCESS(f"Audit chain OK ({check.sealed} records sealed, {unsealed})."))
        if check.unkeyed or check.previous_key:
            self.stdout.write(
                f"{check.unkeyed} records sealed before keyed sealing (v1, plain SHA-256) and {check.previous_key}"
                " under a previous key: `manage.py verify_audit --reseal` re-seals them under ARIA_AUDIT_KEY."
            )
