"""Logbook attachments and handover reports: what the service refuses for its shape once it strips
the text — a blank text or report, a file name that is blank, in a folder or hidden — the schema says
(NOT_BLANK, PLAIN_FILE_NAME), so the schema's verdict on a body and the server's answer agree."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from tests.openapi_bodies import schema_accepts
from workorders.models import LogbookAttachment, ShiftHandover
from workorders.services.logbook import logbook_entry_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("readings.csv", "time,bar\n10:00,4.1\n"),
        ("  readings.csv ", "x"),  # stripped: a plain name
        ("", "x"),
        ("   ", "x"),
        ("\u3000\x85", "x"),
        ("a/b.csv", "x"),
        ("a\\b.csv", "x"),
        (".env", "x"),
        ("  .env", "x"),  # hidden once stripped
        ("\u00a0.env", "x"),
        ("x.env", "x"),
        ("notes.txt", ""),
        ("notes.txt", " \n\t"),
        ("notes.txt", "\u2028\u205f"),
        ("notes.txt", "\u200b"),
    ],
)
def test_the_schema_calls_a_logbook_attachment_valid_exactly_when_the_server_adds_it(
    client, operator, cell, name, text
):
    entry = logbook_entry_create(cell=cell, author=operator, text="Seal drip at P-02.", time=timezone.now())
    client.force_login(operator)
    body = {"name": name, "text": text}
    valid_by_schema = schema_accepts("/api/v1/workorders/shift/logbook/{entry_id}/attachments", body)
    url = f"/api/v1/workorders/shift/logbook/{entry.pk}/attachments"
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code in (201, 422), response.content
    assert (response.status_code == 201) == valid_by_schema, (body, response.json())
    if response.status_code == 422:
        assert response.json()["field"] in ("name", "text"), response.json()
    assert LogbookAttachment.objects.exists() == valid_by_schema


@pytest.mark.parametrize("report", ["Quiet shift; P-02 seal drip watched.", "", "  \n", "\x1c\u3000", "\u200b"])
def test_the_schema_calls_a_handover_report_valid_exactly_when_the_server_saves_it(client, operator, report):
    client.force_login(operator)
    base = "/api/v1/workorders/shift/handovers"
    draft = client.post(base, "{}", content_type="application/json").json()
    body = {"report": report}
    valid_by_schema = schema_accepts(f"{base}/{{handover_id}}", body, method="patch")
    response = client.patch(f"{base}/{draft['id']}", json.dumps(body), content_type="application/json")
    assert response.status_code in (200, 422), response.content
    assert (response.status_code == 200) == valid_by_schema, (body, response.json())
    assert ShiftHandover.objects.get(pk=draft["id"]).revision == (1 if valid_by_schema else 0)
