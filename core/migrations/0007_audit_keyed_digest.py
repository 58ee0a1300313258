"""The audit chain is keyed (core.audit_digest): each sealed record names its digest version, and
the chain head carries an HMAC of its position and hash under the audit key.

Forward: records sealed so far are v1 (plain SHA-256; their hashes are unchanged and still verify),
and the head gets its MAC under the key configured now (ARIA_AUDIT_KEY, or the one derived from
SECRET_KEY): from here on the v1 chain is bound to the key as it stands. Run it with the
environment the processes use.
Backward: records sealed as v2 are re-sealed as v1 (plain SHA-256), from the first of them to the
end, after checking that each verifies under ARIA_AUDIT_KEY / ARIA_AUDIT_PREVIOUS_KEYS — a chain
that does not verify is refused rather than laundered into a valid unkeyed one.

The digests, the head's MAC and the key are copied here (a migration must not follow later code)."""

import hashlib
import hmac
import json

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import migrations, models
from django.utils.crypto import salted_hmac

BATCH = 1000


def _keys():
    configured = getattr(settings, "ARIA_AUDIT_KEY", "")
    if configured:
        current = configured.encode()
    else:
        current = salted_hmac("aria.audit.chain-key", "v2", secret=settings.SECRET_KEY, algorithm="sha256").digest()
    return [current] + [key.encode() for key in getattr(settings, "ARIA_AUDIT_PREVIOUS_KEYS", []) if key]


def _body(previous_hash, record):
    return json.dumps(
        [
            previous_hash,
            record.actor_label,
            record.action,
            record.target_type,
            record.target_id,
            record.details,
            record.created_at.isoformat(),
        ],
        sort_keys=True,
        cls=DjangoJSONEncoder,
        separators=(",", ":"),
    ).encode()


def _head_mac(key, seal, last_hash):
    return hmac.new(key, json.dumps(["aria.audit.head", seal, last_hash]).encode(), hashlib.sha256).hexdigest()


def key_the_chain(apps, schema_editor):
    AuditRecord = apps.get_model("core", "AuditRecord")
    AuditChainHead = apps.get_model("core", "AuditChainHead")
    AuditRecord.objects.filter(seal__isnull=False).update(digest_version=1)
    head = AuditChainHead.objects.filter(pk=1).first()
    if head is None:
        last = AuditRecord.objects.filter(seal__isnull=False).order_by("-seal").only("seal", "hash").first()
        head = AuditChainHead(pk=1, seal=last.seal if last else 0, hash=(last.hash or "") if last else "")
    head.mac = _head_mac(_keys()[0], head.seal, head.hash)
    head.save()


def unkey_the_chain(apps, schema_editor):
    AuditRecord = apps.get_model("core", "AuditRecord")
    AuditChainHead = apps.get_model("core", "AuditChainHead")
    keys = _keys()
    first = AuditRecord.objects.filter(digest_version=2).order_by("seal").only("seal").first()
    if first is None:
        return
    before = AuditRecord.objects.filter(seal__lt=first.seal).order_by("-seal").only("hash").first()
    expected = (before.hash or "") if before else ""
    previous_hash, batch = expected, []
    for record in AuditRecord.objects.filter(seal__gte=first.seal).order_by("seal").iterator(chunk_size=BATCH):
        body = _body(expected, record)
        keyed = any(hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), record.hash) for key in keys)
        if record.digest_version != 2 or record.previous_hash != expected or not keyed:
            raise RuntimeError(
                f"Audit record #{record.pk} (position {record.seal}) does not verify under the audit key: "
                "not re-sealing a broken chain as unkeyed SHA-256 (manage.py verify_audit)."
            )
        expected = record.hash
        record.previous_hash = previous_hash
        record.hash = previous_hash = hashlib.sha256(_body(previous_hash, record)).hexdigest()
        batch.append(record)
    AuditRecord.objects.bulk_update(batch, ["previous_hash", "hash"], batch_size=BATCH)
    AuditChainHead.objects.filter(pk=1).update(seal=batch[-1].seal, hash=previous_hash)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0006_agentrun_billed_to"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditrecord",
            name="digest_version",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="auditchainhead",
            name="mac",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.RunPython(key_the_chain, unkey_the_chain, elidable=False),
    ]
