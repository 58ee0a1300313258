"""Sealers racing on PostgreSQL, each thread on its own connection: writers whose on-commit seals
overlap, sweeper-style sealers looping beside them, and sealers rebuilding a deleted chain head at
once. The chain must come out as one line — positions 1..N each used once, every row sealed once,
no fork (two rows naming the same predecessor) — and verify."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from core.audit import AuditEntry, audit_check, audit_record, audit_record_many, audit_seal
from core.models import AuditChainHead, AuditRecord
from tests.threads import in_threads

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

WRITERS, RECORDS_EACH = 4, 40


def _assert_one_line(expected: int) -> None:
    rows = list(AuditRecord.objects.order_by("seal").values_list("seal", "previous_hash", "hash"))
    assert [seal for seal, *_ in rows] == list(range(1, expected + 1))
    predecessors = [previous for _, previous, _ in rows]
    assert len(set(predecessors)) == len(predecessors)  # no two rows chained to the same one: no fork
    head = AuditChainHead.objects.get()
    assert (head.seal, head.hash) == (rows[-1][0], rows[-1][2])
    check = audit_check(seal=False)
    assert check.ok and (check.sealed, check.unsealed) == (expected, 0), check


def test_writers_and_sweeping_sealers_at_once_make_one_chain() -> None:
    assert connection.vendor == "postgresql"
    start, done = threading.Barrier(WRITERS + 2), threading.Event()

    def writer(n: int) -> None:
        start.wait(30)
        for i in range(RECORDS_EACH):
            if i % 3 == 0:
                with transaction.atomic():
                    audit_record_many([AuditEntry(None, "race.bulk", "thing", f"{n}-{i}-{k}") for k in range(3)])
            else:
                audit_record(actor=None, action="race.one", target_type="thing", target_id=f"{n}-{i}")

    def sealer() -> None:
        start.wait(30)
        while not done.is_set():
            audit_seal(limit=7)

    def writers() -> None:
        try:
            in_threads(*[lambda n=n: writer(n) for n in range(WRITERS)])
        finally:
            done.set()

    in_threads(writers, sealer, sealer, timeout=120)
    audit_seal()
    per_writer = sum(3 if i % 3 == 0 else 1 for i in range(RECORDS_EACH))
    _assert_one_line(WRITERS * per_writer)


def test_sealers_rebuilding_a_deleted_head_at_once_make_one_chain() -> None:
    assert connection.vendor == "postgresql"
    for i in range(5):
        audit_record(actor=None, action="race.before", target_type="thing", target_id=i)  # sealed 1..5
    for i in range(30):
        with transaction.atomic():
            audit_record_many([AuditEntry(None, "race.after", "thing", f"{i}-{k}") for k in range(2)])
    # 60 rows as a crash left them (committed, unsealed), and no head row: each sealer must rebuild
    # it from the sealed chain (position 5) and only one of them may link each row.
    AuditRecord.objects.filter(action="race.after").update(seal=None, previous_hash=None, hash=None)
    AuditChainHead.objects.all().delete()
    start = threading.Barrier(3)

    def sealer() -> None:
        start.wait(30)
        audit_seal(limit=3)
        audit_seal()

    in_threads(sealer, sealer, sealer)
    _assert_one_line(65)
