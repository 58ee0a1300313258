"""Audited writes never lock the audit chain: rows are inserted unsealed in the writer's transaction
and a sealer links committed rows into the hash chain in its own short transaction (docs/KERNEL.md,
"Audit"). The hostile cases: two writers that audit and then lock rows in opposite order (they
deadlocked on the chain's tail), a crash between commit and the on-commit seal, tampering with a
sealed row, and a lower-id row that commits after a higher-id one."""

from __future__ import annotations

import io
import threading

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from core.audit import AuditEntry, audit_check, audit_record, audit_record_many, audit_seal, audit_verify
from core.models import AuditChainHead, AuditRecord
from core.sweep import sweep

WAIT_SECONDS = 20


def _in_thread(work, errors: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            work()
        except BaseException as exc:  # asserted by the test
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_writers_that_audit_then_lock_in_opposite_order_do_not_deadlock_on_the_audit_chain() -> None:
    assert connection.vendor == "postgresql"
    audit_record(actor=None, action="thing.before", target_type="thing", target_id=0)  # a chain to lock
    row = Group.objects.create(name="contended")
    holds_row, first_audited, second_audited = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def first() -> None:
        # T1 audits, then wants the row T2 holds (it waits until T2 commits).
        with transaction.atomic():
            assert holds_row.wait(WAIT_SECONDS)
            audit_record(actor=None, action="thing.first", target_type="thing", target_id=1)
            first_audited.set()
            list(Group.objects.select_for_update().filter(pk=row.pk))

    def second() -> None:
        # T2 holds the row, then audits while T1's audit is uncommitted: it must not wait for T1.
        with transaction.atomic():
            list(Group.objects.select_for_update().filter(pk=row.pk))
            holds_row.set()
            assert first_audited.wait(WAIT_SECONDS)
            audit_record(actor=None, action="thing.second", target_type="thing", target_id=2)
            second_audited.set()

    threads = [_in_thread(first, errors), _in_thread(second, errors)]
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a writer is still waiting: lock cycle"
    assert errors == [] and second_audited.is_set(), errors
    check = audit_check(seal=False)  # each writer's on-commit sealed its own record
    assert check.ok and (check.sealed, check.unsealed) == (3, 0)


def _audit(n: int, prefix: str = "thing.step") -> list:
    return [audit_record(actor=None, action=f"{prefix}{i}", target_type="thing", target_id=i) for i in range(n)]


@pytest.mark.django_db
def test_a_write_inserts_its_record_unsealed_and_seals_it_once_after_commit(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        records = _audit(3)
        audit_record_many([AuditEntry(None, "thing.bulk", "thing", 9)])
        # Inside the writer's transaction: no chain position, no hash, nothing locked.
        assert AuditRecord.objects.filter(seal__isnull=True).count() == 4
        assert AuditRecord.objects.get(pk=records[0].pk).hash is None
    assert len(callbacks) == 1  # one seal per transaction, however many records it wrote
    check = audit_check(seal=False)
    assert (check.sealed, check.unsealed, check.broken, check.head_found) == (4, 0, None, True)
    assert list(AuditRecord.objects.order_by("seal").values_list("action", flat=True)) == [
        "thing.step0",
        "thing.step1",
        "thing.step2",
        "thing.bulk",
    ]


@pytest.mark.django_db
def test_an_audited_write_costs_one_insert_however_many_records() -> None:
    def queries(n: int) -> int:
        with transaction.atomic(), CaptureQueriesContext(connection) as ctx:
            audit_record_many([AuditEntry(None, "thing.bulk", "thing", i) for i in range(n)])
        return len([q for q in ctx.captured_queries if "core_audit" in q["sql"]])

    assert queries(1) == queries(25) == 1


@pytest.mark.django_db
def test_records_a_crash_left_unsealed_are_sealed_by_the_sweeper() -> None:
    # Given records whose transaction committed but whose on-commit seal never ran (a test's
    # transaction never runs it: the same state a crash between commit and on-commit leaves)
    _audit(2)
    audit_seal()
    left = _audit(3, prefix="thing.left")
    check = audit_check(seal=False)
    assert (check.sealed, check.unsealed) == (2, 3) and check.oldest_unsealed_at == left[0].created_at
    assert _verify(["--no-seal"]) == (
        0,
        f"Audit chain OK (2 records sealed, 3 unsealed, the oldest from {left[0].created_at:%Y-%m-%d %H:%M:%S}).\n",
    )
    # When the beat sweeper runs
    touched = sweep()
    # Then they are sealed after the others, and the chain verifies
    assert touched["core.audit_seal"] == 3
    assert [r.seal for r in AuditRecord.objects.filter(pk__in=[r.pk for r in left]).order_by("id")] == [3, 4, 5]
    assert audit_check(seal=False).ok and audit_check(seal=False).unsealed == 0
    assert sweep()["core.audit_seal"] == 0


@pytest.mark.django_db
def test_a_lower_id_sealed_after_a_higher_id_still_verifies() -> None:
    # Given a record with a high id sealed first (a transaction that committed first)...
    (first,) = _audit(1)
    higher = AuditRecord.objects.create(
        actor_label="system", action="thing.higher", target_type="thing", target_id="1", created_at=first.created_at
    )
    AuditRecord.objects.filter(pk=higher.pk).update(id=first.pk + 10)
    audit_seal()
    # ...and one with a lower id that commits (and is sealed) later
    (lower,) = AuditRecord.objects.bulk_create(  # bulk_create: save() refuses a record with an id
        [
            AuditRecord(
                id=first.pk + 5,
                actor_label="system",
                action="thing.lower",
                target_type="thing",
                target_id="2",
                created_at=first.created_at,
            )
        ]
    )
    audit_seal()
    chain = list(AuditRecord.objects.order_by("seal").values_list("id", "seal"))
    assert chain == [(first.pk, 1), (first.pk + 10, 2), (lower.pk, 3)]
    assert audit_verify() is None and audit_check().ok
    # Tampering with the lower-id record, now sealed, is found at it
    AuditRecord.objects.filter(pk=lower.pk).update(details={"forged": True})
    assert audit_verify().pk == lower.pk


@pytest.mark.django_db
def test_cutting_off_the_sealed_tail_is_found_through_the_head() -> None:
    records = _audit(3)
    audit_seal()
    AuditRecord.objects.filter(pk=records[2].pk)._raw_delete(AuditRecord.objects.db)
    # Every remaining link is intact, but the head names a record that is gone.
    check = audit_check()
    assert check.broken is None and not check.head_found and not check.ok
    code, message = _verify([])
    assert code == 1 and "sealed tail was removed" in message


@pytest.mark.django_db
def test_clearing_a_seal_to_have_edited_content_resealed_breaks_the_chain() -> None:
    records = _audit(3)
    audit_seal()
    # A forger clears a sealed record's seal so the sealer re-hashes the edited content at the tail.
    AuditRecord.objects.filter(pk=records[1].pk).update(seal=None, hash=None, previous_hash=None, action="x.forged")
    broken = audit_verify()
    assert broken is not None and broken.pk == records[2].pk


@pytest.mark.django_db
def test_the_head_row_is_rebuilt_from_the_chain_when_missing() -> None:
    _audit(2)
    audit_seal()
    AuditChainHead.objects.all().delete()
    _audit(1, prefix="thing.after")
    assert audit_seal() == 1
    assert AuditRecord.objects.get(action="thing.after0").seal == 3 and audit_check().ok


def _verify(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_audit", *args, stdout=out)
    except CommandError as exc:
        return 1, str(exc)
    return 0, out.getvalue()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_lower_id_committing_after_a_higher_id_is_sealed_after_it_on_postgresql() -> None:
    assert connection.vendor == "postgresql"
    inserted, later_committed = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    ids: dict[str, int] = {}

    def slow() -> None:
        with transaction.atomic():
            ids["slow"] = audit_record(actor=None, action="thing.slow", target_type="thing", target_id=1).pk
            inserted.set()
            assert later_committed.wait(WAIT_SECONDS)

    def fast() -> None:
        assert inserted.wait(WAIT_SECONDS)
        ids["fast"] = audit_record(actor=None, action="thing.fast", target_type="thing", target_id=2).pk
        later_committed.set()

    threads = [_in_thread(slow, errors), _in_thread(fast, errors)]
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and not any(thread.is_alive() for thread in threads), errors
    assert ids["slow"] < ids["fast"]
    seals = dict(AuditRecord.objects.values_list("action", "seal"))
    assert seals == {"thing.fast": 1, "thing.slow": 2}  # sealed by each writer's on-commit, in commit order
    check = audit_check(seal=False)
    assert check.ok and (check.sealed, check.unsealed) == (2, 0)
