"""Hostile attachment uploads: a file that is not what its name says (deeply nested JSON, a CSV
field past the csv module's limit, binary with NUL under a text name, PDFs that break the parser)
is a 422 naming `file` with nothing written — no attachment row, no file left in storage — and a
refused upload (the session is full) leaves no file behind either."""

import io
import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from pypdf import PdfWriter

from assistant.models import Attachment

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


@pytest.fixture(autouse=True)
def _storage_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def _pdf(replace: bytes, by: bytes) -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    out = io.BytesIO()
    writer.write(out)
    data = out.getvalue()
    assert replace in data
    return data.replace(replace, by)


HOSTILE = {
    "deep.json": b"[" * 100_000,  # json.loads: RecursionError
    "long.csv": b"x" * 200_000,  # csv: field larger than field limit (131072)
    "binary.txt": b"seal\x00weeps",  # PostgreSQL text cannot hold NUL
    "binary.csv": b"a,b\x00,c\n",
    "xref.pdf": _pdf(b"xref\n0 5", b"xref\n0 -"),  # pypdf LimitReachedError
    "trailer.pdf": _pdf(b"trailer\n<<", b"trailer\n4<"),  # pypdf AttributeError
    "table.pdf": _pdf(b"xref\n0 5", b"xref/0 5"),  # pypdf TypeError
}


def new_session(client) -> int:
    return client.post(f"{API}/sessions", {"title": "uploads"}, content_type="application/json").json()["id"]


def upload(client, sid: int, name: str, body: bytes):
    file = io.BytesIO(body)
    file.name = name
    return client.post(f"{API}/sessions/{sid}/attachments/upload", {"file": file})


def stored_files(settings, sid: int) -> list[str]:
    folder = os.path.join(settings.MEDIA_ROOT, "assistant", str(sid))
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_file_that_is_not_what_its_name_says_is_a_422_naming_file(client, operator, settings, name):
    client.force_login(operator)
    sid = new_session(client)
    response = upload(client, sid, name, HOSTILE[name])
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "file"
    assert not Attachment.objects.filter(session_id=sid).exists()
    assert stored_files(settings, sid) == []


def test_an_upload_refused_because_the_session_is_full_leaves_no_file(client, operator, settings):
    client.force_login(operator)
    sid = new_session(client)
    for index in range(Attachment.PER_SESSION_LIMIT):
        assert upload(client, sid, f"note-{index}.txt", b"P-02 ok").status_code == 201
    response = upload(client, sid, "one-too-many.txt", b"P-02 seal weeps")
    assert response.status_code == 422
    assert response.json()["field"] == "attachments"
    assert "one-too-many.txt" not in stored_files(settings, sid)
    assert len(stored_files(settings, sid)) == Attachment.PER_SESSION_LIMIT


def test_a_hostile_stored_object_is_a_422_naming_key(client, operator):
    client.force_login(operator)
    sid = new_session(client)
    key = default_storage.save(f"assistant/{sid}/deep.json", ContentFile(b"[" * 100_000))
    response = client.post(
        f"{API}/sessions/{sid}/attachments", {"kind": "object_file", "key": key}, content_type="application/json"
    )
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "key"
    assert not Attachment.objects.filter(session_id=sid).exists()


def test_a_readable_pdf_and_csv_still_attach(client, operator):
    client.force_login(operator)
    sid = new_session(client)
    assert upload(client, sid, "blank.pdf", _pdf(b"", b"")).status_code == 201
    response = upload(client, sid, "readings.csv", b"tag,value\nP-02,4.1\n")
    assert response.status_code == 201
    assert Attachment.objects.get(pk=response.json()["id"]).content_text == "tag | value\nP-02 | 4.1"
