"""The audit chain's digests and its key (docs/KERNEL.md, "Audit").

A sealed record's `hash` is its digest over `[previous_hash, actor_label, action, target_type,
target_id, details, created_at]` (canonical JSON), by its `digest_version`:

- v1: plain SHA-256. Records sealed before keyed sealing; they still verify, but only as the chain's
  prefix and up to the head's position (core.audit), since anyone can recompute them.
- v2: HMAC-SHA256 under the audit key. Every record sealed now.

The chain head (`AuditChainHead`) carries `mac`, an HMAC of its position and hash under the key: it
binds the whole chain (v1 prefix included) to the key, so a writer of the table who edits a record
and recomputes the chain and the head cannot make it verify without the key.

The key lives outside the database: `ARIA_AUDIT_KEY` (settings, from the environment). Unset, it is
derived from SECRET_KEY for this one purpose (development / embedded mode; `check --deploy` warns).
`ARIA_AUDIT_PREVIOUS_KEYS` are accepted when verifying, never used to seal: rotation is "new key,
old key to the previous ones (`SECRET_KEY` names the derived one), `verify_audit --reseal`, drop the
old key". The key is never logged or shown.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.serializers.json import DjangoJSONEncoder
from django.utils.crypto import salted_hmac

DIGEST_V1 = 1  # unkeyed SHA-256 (before keyed sealing)
DIGEST_V2 = 2  # HMAC-SHA256 under the audit key
KEY_PURPOSE = "aria.audit.chain-key"  # salted_hmac's salt: the derived key serves this purpose only
MIN_KEY_LENGTH = 32
DERIVED_KEY_ALIAS = "SECRET_KEY"  # in ARIA_AUDIT_PREVIOUS_KEYS: the key derived from SECRET_KEY


@dataclass(frozen=True, repr=False)  # repr=False: a key never ends up in a log or a traceback
class AuditKeys:
    current: bytes
    previous: tuple[bytes, ...]

    @property
    def accepted(self) -> tuple[bytes, ...]:
        """Keys a digest may verify under: the current one first."""
        return (self.current, *self.previous)


def key_derived_from_secret_key() -> bool:
    return not getattr(settings, "ARIA_AUDIT_KEY", "")


def _derived_key() -> bytes:
    return salted_hmac(KEY_PURPOSE, "v2", secret=settings.SECRET_KEY, algorithm="sha256").digest()


def audit_keys() -> AuditKeys:
    """The sealing key and the keys still accepted when verifying (read on each call: cheap, and
    `override_settings` in tests takes effect). A previous key written `SECRET_KEY` stands for the
    key derived from SECRET_KEY: the one used before ARIA_AUDIT_KEY was set."""
    configured = getattr(settings, "ARIA_AUDIT_KEY", "")
    current = configured.encode() if configured else _derived_key()
    previous = [
        _derived_key() if key == DERIVED_KEY_ALIAS else key.encode()
        for key in getattr(settings, "ARIA_AUDIT_PREVIOUS_KEYS", [])
        if key
    ]
    return AuditKeys(current, tuple(key for key in previous if key != current))


def record_body(previous_hash: str, record: Any) -> bytes:
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


def keyed(key: bytes, message: bytes) -> str:
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def record_digest(version: int, key: bytes, previous_hash: str, record: Any) -> str:
    """The record's digest under `version` (v1 ignores `key`)."""
    body = record_body(previous_hash, record)
    if version == DIGEST_V1:
        return hashlib.sha256(body).hexdigest()
    if version == DIGEST_V2:
        return keyed(key, body)
    raise ValueError(f"unknown audit digest version {version!r}")


def head_message(seal: int, last_hash: str) -> bytes:
    """What the head's MAC covers: its position and the hash of the record there (a 3-item JSON
    list, never a record's 7-item body)."""
    return json.dumps(["aria.audit.head", seal, last_hash]).encode()


def head_mac(key: bytes, seal: int, last_hash: str) -> str:
    return keyed(key, head_message(seal, last_hash))


def key_index(keys: Sequence[bytes], expected: str | None, message: bytes) -> int | None:
    """Index of the first key whose HMAC of `message` is `expected` (0: the current key), or None."""
    if not expected:
        return None
    for index, key in enumerate(keys):
        if hmac.compare_digest(keyed(key, message), expected):
            return index
    return None


@checks.register(checks.Tags.security, deploy=True)
def check_audit_key(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """`check --deploy`: the audit key must be its own secret outside DEBUG (never shows it)."""
    if settings.DEBUG:
        return []
    hint = (
        "Set ARIA_AUDIT_KEY to at least 32 random characters, kept apart from SECRET_KEY and the database "
        '(e.g. `python -c "import secrets; print(secrets.token_urlsafe(48))"`) with '
        "ARIA_AUDIT_PREVIOUS_KEYS=SECRET_KEY, run `manage.py verify_audit --reseal`, then drop the previous key "
        "(docs/KERNEL.md, Audit)."
    )
    configured = getattr(settings, "ARIA_AUDIT_KEY", "")
    if not configured:
        return [
            checks.Warning(
                "ARIA_AUDIT_KEY is not set: the audit chain is keyed with a key derived from SECRET_KEY, "
                "so whoever has SECRET_KEY and the database can rewrite the audit trail undetected.",
                hint=hint,
                id="aria.audit.W001",
            )
        ]
    if len(configured) < MIN_KEY_LENGTH or configured == settings.SECRET_KEY:
        return [
            checks.Warning(
                f"ARIA_AUDIT_KEY is shorter than {MIN_KEY_LENGTH} characters or equal to SECRET_KEY.",
                hint=hint,
                id="aria.audit.W002",
            )
        ]
    return []
