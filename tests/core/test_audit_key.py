"""The audit chain is keyed (core.audit_digest, docs/KERNEL.md "Audit"): a writer of the audit table
without ARIA_AUDIT_KEY who edits a record and recomputes the chain and the head — with plain
SHA-256, as v1 or v2, or under another key — is found; the same forgery with the key passes (the key
is what protects). Records sealed before keyed sealing (v1) still verify, `audit_reseal` re-seals
them and refuses a broken chain, previous keys verify after a rotation, and `check --deploy` warns
when the key is only derived from SECRET_KEY."""

from __future__ import annotations

import hashlib
import importlib
import io
import logging

import pytest
from django.apps import apps as django_apps
from django.core import checks
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from core.audit import (
    AuditChainError,
    AuditEntry,
    audit_check,
    audit_record,
    audit_record_many,
    audit_reseal,
    audit_seal,
)
from core.audit_digest import (
    DIGEST_V1,
    DIGEST_V2,
    audit_keys,
    check_audit_key,
    head_mac,
    head_message,
    record_digest,
)
from core.models import AuditChainHead, AuditRecord

migration = importlib.import_module("core.migrations.0007_audit_keyed_digest")

KEY_A = "a-first-audit-key-of-forty-characters-xx"
KEY_B = "b-second-audit-key-of-forty-characters-x"


def _chain(n: int, prefix: str = "thing.step") -> list[AuditRecord]:
    for i in range(n):
        audit_record(actor=None, action=f"{prefix}{i}", target_type="thing", target_id=i, details={"n": i})
    audit_seal()
    return list(AuditRecord.objects.order_by("seal"))


def _rechain(start: int, *, version: int | None, key: bytes, head: bool = True, head_key: bytes | None = None) -> None:
    """What a writer of the table does: recompute every record from position `start` (0-based) to
    the end with `version`'s digest under `key`, then (with `head`) point the head at the new end
    with a MAC under `head_key` (None: plain SHA-256, all one can do without a key)."""
    rows = list(AuditRecord.objects.order_by("seal"))
    previous = rows[start - 1].hash if start else ""
    for row in rows[start:]:
        digest = record_digest(version or DIGEST_V1, key, previous, row)
        AuditRecord.objects.filter(pk=row.pk).update(previous_hash=previous, hash=digest, digest_version=version)
        previous = digest
    if head:
        mac = head_mac(head_key, rows[-1].seal, previous) if head_key else hashlib.sha256(previous.encode()).hexdigest()
        AuditChainHead.objects.update(seal=rows[-1].seal, hash=previous, mac=mac)


def _forge(records: list[AuditRecord], index: int, **rechain) -> None:
    AuditRecord.objects.filter(pk=records[index].pk).update(action="thing.forged", details={"n": -1})
    _rechain(index, **rechain)


def _legacy_chain(n: int) -> list[AuditRecord]:
    """`n` records as the unkeyed code left them (plain SHA-256, no version, head without MAC),
    then migrated forward (core 0007): v1, the head keyed as it stands."""
    _chain(n)
    _rechain(0, version=None, key=b"")
    AuditChainHead.objects.update(mac="")
    migration.key_the_chain(django_apps, None)
    return list(AuditRecord.objects.order_by("seal"))


def _verify(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_audit", *args, stdout=out)
    except CommandError as exc:
        return 1, str(exc)
    return 0, out.getvalue()


def _hashes() -> list[tuple[int, str, int]]:
    return list(AuditRecord.objects.order_by("seal").values_list("seal", "hash", "digest_version"))


@pytest.mark.django_db
def test_new_records_are_sealed_keyed_and_the_head_carries_a_mac() -> None:
    records = _chain(3)
    keys = audit_keys()
    assert [r.digest_version for r in records] == [DIGEST_V2] * 3
    assert records[1].hash == record_digest(DIGEST_V2, keys.current, records[0].hash, records[1])
    assert records[1].hash != record_digest(DIGEST_V1, b"", records[0].hash, records[1])
    head = AuditChainHead.objects.get()
    assert head.mac == head_mac(keys.current, 3, records[2].hash)
    check = audit_check()
    assert check.ok and (check.unkeyed, check.previous_key) == (0, 0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("index", "version", "key", "found_at"),
    [
        (2, DIGEST_V1, b"", 2),  # plain SHA-256, marked v1 (a downgrade after keyed records)
        (2, DIGEST_V2, b"", 2),  # plain SHA-256 digests would need the key's HMAC: an empty key is a wrong one
        (2, DIGEST_V2, b"not-the-audit-key", 2),
        (0, DIGEST_V2, b"not-the-audit-key", 0),
        (0, DIGEST_V1, b"", None),  # the whole chain downgraded to v1: every record checks out, the head does not
    ],
)
def test_a_forger_without_the_key_who_recomputes_the_chain_and_the_head_is_found(index, version, key, found_at) -> None:
    records = _chain(5)
    # Given a writer of the table edits a record, recomputes it and every later one, and rewrites
    # the head (position, hash, and a MAC under their own key)
    _forge(records, index, version=version, key=key, head_key=key or None)
    # Then verification fails: at the forged record, or at the head
    check = audit_check()
    assert not check.ok
    if found_at is None:
        assert check.broken is None and check.head_found and not check.head_keyed
    else:
        assert check.broken is not None and check.broken.pk == records[found_at].pk
    assert _verify()[0] == 1
    # and the sealer does not key the forgery: a new record waits unsealed
    audit_record(actor=None, action="thing.after", target_type="thing", target_id=9)
    if found_at is None:
        with pytest.raises(AuditChainError):
            audit_seal()
        assert AuditRecord.objects.get(action="thing.after").seal is None


@pytest.mark.django_db
@pytest.mark.parametrize("index", [0, 2])
def test_the_same_forgery_with_the_key_verifies(index) -> None:
    # The control: what stops the forger is the key, so whoever holds it (and the table) can rewrite.
    records = _chain(5)
    current = audit_keys().current
    _forge(records, index, version=DIGEST_V2, key=current, head_key=current)
    check = audit_check()
    assert check.ok and check.sealed == 5
    assert AuditRecord.objects.get(pk=records[index].pk).action == "thing.forged"


@pytest.mark.django_db
def test_records_sealed_before_keyed_sealing_still_verify_as_v1_and_new_ones_follow_keyed() -> None:
    records = _legacy_chain(3)
    assert [r.digest_version for r in records] == [DIGEST_V1] * 3
    check = audit_check()
    assert check.ok and (check.sealed, check.unkeyed) == (3, 3)
    code, out = _verify()
    assert code == 0 and "3 records sealed before keyed sealing (v1" in out and "--reseal" in out
    audit_record(actor=None, action="thing.keyed", target_type="thing", target_id=3)
    audit_seal()
    keyed = AuditRecord.objects.get(action="thing.keyed")
    assert (keyed.seal, keyed.digest_version, keyed.previous_hash) == (4, DIGEST_V2, records[2].hash)
    assert audit_check().ok


@pytest.mark.django_db
def test_rewriting_the_v1_prefix_is_found_through_the_first_keyed_record() -> None:
    _legacy_chain(3)
    audit_record(actor=None, action="thing.keyed", target_type="thing", target_id=3)
    audit_seal()
    records = list(AuditRecord.objects.order_by("seal"))
    # The forger edits a v1 record and recomputes the v1 part with plain SHA-256, leaving the keyed tail.
    AuditRecord.objects.filter(pk=records[1].pk).update(action="thing.forged")
    rows = list(AuditRecord.objects.order_by("seal"))
    previous = rows[0].hash
    for row in rows[1:3]:
        previous = record_digest(DIGEST_V1, b"", previous, row)
        AuditRecord.objects.filter(pk=row.pk).update(previous_hash=rows[rows.index(row) - 1].hash, hash=previous)
        rows[rows.index(row)].hash = previous
    assert audit_check().broken.pk == records[3].pk  # its keyed digest covers the old link


@pytest.mark.django_db
def test_rewriting_an_all_v1_chain_is_found_through_the_head() -> None:
    records = _legacy_chain(4)
    _forge(records, 1, version=DIGEST_V1, key=b"", head=False)
    assert not audit_check().head_found  # the head (keyed by the migration) names the old last hash
    _rechain(1, version=DIGEST_V1, key=b"")  # and pointing the head at the new end needs the key
    check = audit_check()
    assert check.broken is None and check.head_found and not check.head_keyed and not check.ok


@pytest.mark.django_db
def test_reseal_re_seals_a_verified_v1_chain_under_the_key_once() -> None:
    _legacy_chain(3)
    code, out = _verify("--reseal")
    assert code == 0 and "Re-sealed 3 records" in out and "before keyed sealing" not in out
    audit_seal()  # (a test's transaction never runs the on-commit seal of the reseal's own record)
    rows = list(AuditRecord.objects.order_by("seal"))
    assert [r.digest_version for r in rows] == [DIGEST_V2] * 4  # and its own audit.resealed record
    assert rows[-1].action == "audit.resealed" and rows[-1].details == {"records": 3}
    check = audit_check()
    assert check.ok and (check.unkeyed, check.previous_key) == (0, 0)
    before = _hashes()
    assert audit_reseal() == 0 and _hashes() == before and AuditRecord.objects.count() == 4
    assert _verify("--reseal")[1].startswith("Re-sealed 0 records")


@pytest.mark.django_db
def test_reseal_refuses_a_broken_v1_chain_and_writes_nothing() -> None:
    records = _legacy_chain(3)
    AuditRecord.objects.filter(pk=records[1].pk).update(action="thing.forged")
    before = _hashes()
    with pytest.raises(AuditChainError):
        audit_reseal()
    code, message = _verify("--reseal")
    assert code == 1 and f"#{records[1].pk}" in message
    assert _hashes() == before and AuditRecord.objects.count() == 3
    assert AuditChainHead.objects.get().hash == records[2].hash


@pytest.mark.django_db
def test_rotation_previous_keys_verify_until_resealed_under_the_new_key() -> None:
    with override_settings(ARIA_AUDIT_KEY=KEY_A):
        records = _chain(3)
    with override_settings(ARIA_AUDIT_KEY=KEY_B):  # the old key dropped too early: nothing verifies
        check = audit_check(seal=False)
        assert check.broken.pk == records[0].pk and not check.head_keyed
        with pytest.raises(AuditChainError):
            audit_reseal()
    with override_settings(ARIA_AUDIT_KEY=KEY_B, ARIA_AUDIT_PREVIOUS_KEYS=[KEY_A]):
        audit_record(actor=None, action="thing.new", target_type="thing", target_id=3)
        audit_seal()  # sealed under the new key on top of the old one's head
        check = audit_check()
        assert check.ok and check.previous_key == 3
        assert audit_reseal() == 4
    with override_settings(ARIA_AUDIT_KEY=KEY_B):
        check = audit_check()
        assert check.ok and (check.sealed, check.previous_key) == (5, 0)


@pytest.mark.django_db
def test_a_missing_head_is_rebuilt_only_from_a_keyed_tail() -> None:
    records = _chain(2)
    AuditChainHead.objects.all().delete()
    assert audit_check(seal=False).head_keyed is False
    assert audit_check().ok  # sealing rebuilt it from the last record, whose HMAC verifies
    # A forger who downgrades the chain and deletes the head gets no head rebuilt from it.
    _forge(records, 0, version=DIGEST_V1, key=b"", head=False)
    AuditChainHead.objects.all().delete()
    with pytest.raises(AuditChainError):
        audit_seal()
    assert not audit_check().ok and not AuditChainHead.objects.exists()


@pytest.mark.django_db
def test_keyed_sealing_costs_the_same_queries_however_many_records() -> None:
    def queries(n: int) -> tuple[int, int]:
        with CaptureQueriesContext(connection) as write:
            audit_record_many([AuditEntry(None, "thing.bulk", "thing", i) for i in range(n)])
        with CaptureQueriesContext(connection) as seal:
            assert audit_seal() == n
        return len([q for q in write.captured_queries if "core_audit" in q["sql"]]), len(seal.captured_queries)

    _chain(1)
    assert queries(1) == queries(25)
    assert queries(1)[0] == 1  # the audited write: one INSERT, no lock


@pytest.mark.django_db
def test_the_key_is_never_shown() -> None:
    with override_settings(ARIA_AUDIT_KEY=KEY_A):
        records = _chain(2)
        _forge(records, 1, version=DIGEST_V2, key=b"x")
        outputs = [_verify()[1], _verify("--reseal")[1], repr(audit_keys())]
        outputs += [str(m) for m in checks.run_checks(include_deployment_checks=True)]
    assert all(KEY_A not in text for text in outputs)


@pytest.mark.parametrize(
    ("debug", "key", "expected"),
    [
        (False, "", ["aria.audit.W001"]),
        (False, "short", ["aria.audit.W002"]),
        (False, KEY_A, []),
        (True, "", []),
    ],
)
def test_check_deploy_warns_when_the_key_is_derived_from_secret_key(debug, key, expected) -> None:
    with override_settings(DEBUG=debug, ARIA_AUDIT_KEY=key):
        assert [m.id for m in check_audit_key()] == expected
        deploy = checks.run_checks(include_deployment_checks=True, tags=[checks.Tags.security])
        assert [m.id for m in deploy if m.id.startswith("aria.audit")] == expected
        assert [m.id for m in checks.run_checks(tags=[checks.Tags.security]) if m.id.startswith("aria.audit")] == []


@pytest.mark.django_db
def test_migrating_back_re_seals_v2_as_v1_and_refuses_a_broken_chain() -> None:
    _legacy_chain(2)
    _chain(2, prefix="thing.keyed")
    records = list(AuditRecord.objects.order_by("seal"))
    AuditRecord.objects.filter(pk=records[3].pk).update(action="thing.forged")
    before = _hashes()
    with pytest.raises(RuntimeError, match=f"#{records[3].pk}"):
        migration.unkey_the_chain(django_apps, None)
    assert _hashes() == before
    AuditRecord.objects.filter(pk=records[3].pk).update(action=records[3].action)
    migration.unkey_the_chain(django_apps, None)
    # What the unkeyed code (core 0006) verifies: plain SHA-256 links from the start to the head.
    previous = ""
    for row in AuditRecord.objects.order_by("seal"):
        assert row.previous_hash == previous and row.hash == record_digest(DIGEST_V1, b"", previous, row)
        previous = row.hash
    assert AuditChainHead.objects.get().hash == previous
    assert head_message(4, previous)  # (the MAC column goes with the migration)


@pytest.mark.django_db(transaction=True)
def test_a_forged_head_never_fails_the_audited_write(caplog) -> None:
    _chain(2)  # (committed: each record was sealed on commit)
    AuditChainHead.objects.update(mac="0" * 64)
    caplog.set_level(logging.ERROR, logger="core.audit")
    with transaction.atomic():
        record = audit_record(actor=None, action="thing.after", target_type="thing", target_id=2)
    # The write committed; its on-commit sealing was refused and logged, and the record waits.
    assert AuditRecord.objects.get(pk=record.pk).seal is None
    assert "Audit sealing refused" in caplog.text and "MAC does not verify" in caplog.text
    assert audit_check().unsealed == 1 and audit_check().sealed == 2
