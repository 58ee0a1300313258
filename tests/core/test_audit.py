"""The audit trail is append-only and hash-chained; tampering is found at the right record.
(Sealing after commit, the sweeper and concurrency: test_audit_seal.py.)"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from core.audit import audit_record, audit_seal, audit_verify
from core.models import AuditRecord


def _chain(n: int, actor=None) -> list[AuditRecord]:
    """n records, sealed (in a test's transaction the on-commit seal never runs)."""
    records = [
        audit_record(actor=actor, action=f"thing.step{i}", target_type="thing", target_id=i, details={"n": i})
        for i in range(n)
    ]
    audit_seal()
    return list(AuditRecord.objects.filter(pk__in=[r.pk for r in records]).order_by("seal"))


def _verify() -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_audit", stdout=out)
    except CommandError as exc:
        return 1, str(exc)
    return 0, out.getvalue()


@pytest.mark.django_db
def test_records_link_to_the_previous_hash(operator) -> None:
    first, second, third = _chain(3, actor=operator)
    assert (first.seal, second.seal, third.seal) == (1, 2, 3) and first.previous_hash == ""
    assert second.previous_hash == first.hash and third.previous_hash == second.hash
    assert third.actor_label == "olga"
    assert audit_verify() is None
    assert _verify() == (0, "Audit chain OK (3 records sealed, 0 unsealed).\n")


@pytest.mark.django_db
def test_empty_chain_is_ok() -> None:
    assert _verify()[0] == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        {"details": {"n": 999}},
        {"action": "thing.forged"},
        {"actor_label": "mallory"},
        {"target_id": "42"},
    ],
)
def test_tampering_through_update_is_found_at_that_record(change: dict) -> None:
    records = _chain(5)
    # Given someone edits record 3 with a queryset update (which bypasses save())
    AuditRecord.objects.filter(pk=records[2].pk).update(**change)
    # Then verification points at exactly that record
    broken = audit_verify()
    assert broken is not None and broken.pk == records[2].pk
    code, message = _verify()
    assert code == 1
    assert f"#{records[2].pk}" in message
    assert (change.get("action") or "thing.step2") in message


@pytest.mark.django_db
def test_rehashing_a_record_breaks_the_next_link() -> None:
    records = _chain(4)
    # A forger who also recomputes the edited record's hash still breaks its successor's link.
    AuditRecord.objects.filter(pk=records[1].pk).update(hash="0" * 64)
    assert audit_verify().pk == records[1].pk
    AuditRecord.objects.filter(pk=records[1].pk).update(hash=records[1].hash)
    AuditRecord.objects.filter(pk=records[2].pk).update(previous_hash="f" * 64)
    assert audit_verify().pk == records[2].pk


@pytest.mark.django_db
def test_deleting_a_record_is_found_at_its_successor() -> None:
    records = _chain(4)
    AuditRecord.objects.filter(pk=records[1].pk)._raw_delete(AuditRecord.objects.db)
    assert audit_verify().pk == records[2].pk


@pytest.mark.django_db
def test_saving_or_deleting_an_existing_record_raises() -> None:
    (record,) = _chain(1)
    record.details = {"n": 2}
    with pytest.raises(ValueError, match="append-only"):
        record.save()
    with pytest.raises(ValueError, match="append-only"):
        record.delete()
    assert audit_verify() is None


@pytest.mark.django_db
def test_admin_shows_audit_records_read_only(client: Client, admin_user) -> None:
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    (record,) = _chain(1)
    client.force_login(admin_user)

    assert client.get("/admin/core/auditrecord/").status_code == 200
    page = client.get(f"/admin/core/auditrecord/{record.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert client.get("/admin/core/auditrecord/add/").status_code == 403
    assert client.post(f"/admin/core/auditrecord/{record.pk}/change/", {"action": "x"}).status_code == 403
    assert client.post(f"/admin/core/auditrecord/{record.pk}/delete/", {"post": "yes"}).status_code == 403
    assert audit_verify() is None and AuditRecord.objects.get().action == "thing.step0"


@pytest.mark.django_db
@pytest.mark.parametrize("model", ["event", "agentrun", "agentstep"])
def test_event_and_agent_run_admins_are_read_only(client: Client, admin_user, model: str) -> None:
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    assert client.get(f"/admin/core/{model}/").status_code == 200
    assert client.get(f"/admin/core/{model}/add/").status_code == 403


@pytest.mark.django_db
def test_agent_run_admin_shows_its_steps_inline(client: Client, admin_user) -> None:
    from core.models import AgentRun, AgentStep

    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    run = AgentRun.objects.create(agent="investigator", turn_id="t1", engine="fake")
    AgentStep.objects.create(run=run, index=0, tool="get_signal_trends", result_summary="3 item(s)")
    client.force_login(admin_user)
    page = client.get(f"/admin/core/agentrun/{run.pk}/change/")
    assert page.status_code == 200
    assert b"get_signal_trends" in page.content and b'name="_save"' not in page.content
