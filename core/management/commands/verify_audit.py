"""`manage.py verify_audit`: walk the audit hash chain; report OK or the first broken link (exit 1)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.audit import audit_verify
from core.models import AuditRecord


class Command(BaseCommand):
    help = "Verify the audit trail's hash chain; exits non-zero at the first broken record."

    def handle(self, *args: Any, **options: Any) -> None:
        broken = audit_verify()
        if broken is not None:
            raise CommandError(
                f"Audit chain broken at record #{broken.pk} ({broken.action} {broken.target_type}:{broken.target_id},"
                f" {broken.created_at:%Y-%m-%d %H:%M:%S}): its content or link does not match the chain."
            )
        self.stdout.write(self.style.SUCCESS(f"Audit chain OK ({AuditRecord.objects.count()} records)."))
