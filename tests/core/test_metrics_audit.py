"""/metrics reports the audit trail's tamper window (core.metrics `core.audit_chain`): how many
committed records are not sealed into the hash chain yet, and how long the oldest has waited."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from core.audit import AuditEntry, audit_record, audit_record_many, audit_seal
from core.models import AuditRecord


def gauges(client) -> dict[str, float]:
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
        if not sample.labels
    }


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.mark.django_db
def test_unsealed_records_and_the_oldest_age_are_reported_until_sealed(admin_client, operator):
    # In a test the transaction never commits, so the on-commit sealer has not run: as after a crash.
    audit_seal()
    before = gauges(admin_client)
    assert before["aria_audit_unsealed"] == 0 and before["aria_audit_unsealed_oldest_seconds"] == 0

    old = audit_record(actor=operator, action="probe.old", target_type="probe", target_id=1)
    audit_record_many([AuditEntry(operator, "probe.new", "probe", n) for n in (2, 3)])
    AuditRecord.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    waiting = gauges(admin_client)
    assert waiting["aria_audit_unsealed"] == 3
    assert 600 <= waiting["aria_audit_unsealed_oldest_seconds"] < 900

    assert audit_seal() == 3
    sealed = gauges(admin_client)
    assert sealed["aria_audit_unsealed"] == 0 and sealed["aria_audit_unsealed_oldest_seconds"] == 0


@pytest.mark.django_db
def test_the_figure_costs_one_query_however_many_records_wait(admin_client, operator):
    def scrape_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            gauges(admin_client)
        return sum("core_auditrecord" in q["sql"] for q in queries.captured_queries)

    audit_record(actor=operator, action="probe", target_type="probe", target_id=0)
    few = scrape_queries()
    audit_record_many([AuditEntry(operator, "probe", "probe", n) for n in range(1, 60)])
    assert scrape_queries() == few == 1
