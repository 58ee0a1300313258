from django.conf import settings
from django.db import models


class AuditRecord(models.Model):
    """Append-only, hash-chained record of who did what. Written only by core.audit.

    A record is inserted unsealed (`seal`, `previous_hash` and `hash` null) in the writer's
    transaction; the sealer later gives it its chain position (`seal`) and hashes. The chain is
    walked in `seal` order, which is commit order, not id order. `digest_version` says how `hash`
    was computed (core.audit_digest)."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=100, db_index=True)
    target_type = models.CharField(max_length=100, db_index=True)
    target_id = models.CharField(max_length=64, db_index=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_index=True)
    seal = models.PositiveBigIntegerField(null=True, blank=True, unique=True)
    previous_hash = models.CharField(max_length=64, null=True, blank=True)
    hash = models.CharField(max_length=64, null=True, blank=True, unique=True)
    # How `hash` was computed (core.audit_digest): 1 plain SHA-256 (sealed before keyed sealing),
    # 2 HMAC-SHA256 under ARIA_AUDIT_KEY; null while unsealed.
    digest_version = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["target_type", "target_id"]),
            models.Index(fields=["id"], condition=models.Q(seal__isnull=True), name="core_audit_unsealed"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor_label} {self.action} {self.target_type}:{self.target_id}"
        )

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ValueError("Audit records are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("Audit records are append-only.")


class AuditChainHead(models.Model):
    """The one row (pk 1) that is the sealer's lock and cursor: the last sealed position and hash.
    Only core.audit's sealer writes it, under its row lock; it also lets verification see a
    chain whose sealed tail was cut off."""

    seal = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, blank=True)
    # HMAC of (seal, hash) under the audit key (core.audit_digest.head_mac): binds the chain to the key.
    mac = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"audit chain head at #{self.seal}"
