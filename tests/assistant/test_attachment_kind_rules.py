"""What a JSON attachment needs depends on its kind (a snippet's text, a library resource's type and
ref, an object file's bucket and key); the schema of POST /assistant/sessions/{id}/attachments
states it per kind (assistant.api.attachment_rules), so the schema's verdict on a body and the
server's answer agree: valid by the schema is never a 422 (a 404 for a ref or key that names
nothing is not a refusal of the shape), invalid by it always is, naming the field."""

from __future__ import annotations

import json

import pytest

from assistant.models import Attachment, Session
from tests.openapi_bodies import schema_accepts

pytestmark = pytest.mark.django_db
TOO_BIG = "9" * 19  # a row id in form, past any row: 9999999999999999999 > 2**63 - 1


def _library(resource_type: str | None, ref: str | None) -> dict:
    body = {"kind": "library_resource", "resource_type": resource_type, "ref": ref}
    return {key: value for key, value in body.items() if value is not None}


def _object(key: str | None, **more: str) -> dict:
    return {"kind": "object_file", **({"key": key} if key is not None else {}), **more}


CASES = [
    {"kind": "text_snippet", "text": "pump P-02 notes"},
    {"kind": "text_snippet"},  # the case found: a blank text was refused for this kind only
    {"kind": "text_snippet", "text": ""},
    {"kind": "text_snippet", "text": " \t\r\n"},
    {"kind": "text_snippet", "text": "\u3000\x85\x1f"},  # blank to str.strip()
    {"kind": "text_snippet", "text": "\u200b"},  # not whitespace to str.strip()
    {"kind": "object_file", "key": "assistant/1/a.txt", "text": ""},  # a text matters for a snippet only
    _library(None, "tidy"),
    _library("spell", "tidy"),
    _library("skill", None),
    _library("skill", "  "),
    _library("skill", "no-such-skill"),
    _library("tool", "12"),
    _library("kb_entry", "12"),
    _library("kb_entry", " 12\n"),
    _library("kb_entry", "0"),
    _library("kb_entry", "abc"),
    _library("kb_entry", "007"),
    _library("kb_entry", "\u00b2"),
    _library("kb_entry", "12\n3"),
    _library("work_order", TOO_BIG),
    _library("work_order", TOO_BIG + "9"),
    _library("work_order", "123456"),
    _library("prompt", "investigator"),
    _library("prompt", "investigator@v2"),
    _library("prompt", " investigator@v2\t"),
    _library("prompt", "investigator@v"),
    _library("prompt", "investigator@v0"),
    _library("prompt", "investigator@vtwo"),
    _library("prompt", "investigator@v 2"),
    _library("prompt", "investigator@v2@v3"),
    _library("prompt", "investigator@v2\n"),
    _library("prompt", f"investigator@v{TOO_BIG}"),
    _library("prompt", "investigator@v9999999999"),  # past a 32-bit version column
    _object("assistant/999/none.txt"),
    _object(".hidden/a..b/ /x.md"),
    _object(None),
    _object(""),
    _object("   "),
    _object("/etc/passwd"),
    _object("a\\b.txt"),
    _object("C:x.txt"),
    _object("a//b.txt"),
    _object("a/./b.txt"),
    _object("../x.txt"),
    _object("a/.."),
    _object("a.txt\n"),
    _object("a\x7f.txt"),
    _object("x" * 513),
    _object("a.txt", bucket="other"),
]


@pytest.mark.parametrize("body", CASES)
def test_the_schema_calls_an_attachment_valid_exactly_when_the_server_takes_its_shape(client, operator, body):
    session = Session.objects.create(owner=operator, title="attachments")
    client.force_login(operator)
    valid_by_schema = schema_accepts("/api/v1/assistant/sessions/{session_id}/attachments", body)
    url = f"/api/v1/assistant/sessions/{session.pk}/attachments"
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code in (201, 404, 422), response.content
    assert (response.status_code != 422) == valid_by_schema, (body, response.json())
    if response.status_code == 422:
        assert response.json()["field"] in ("text", "resource_type", "ref", "bucket", "key"), response.json()
    assert Attachment.objects.exists() == (response.status_code == 201)
