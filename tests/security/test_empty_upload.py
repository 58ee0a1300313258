"""An attachment upload is a file of at least one byte, and the schema says so (`minLength: 1` on
the multipart `file`): an empty file attaches nothing and is a 422 naming `file`, however it is sent.

The fuzzer's find (ST202, ~30 examples): POST …/attachments/upload answered 422 "file.file: Field
required" to a body whose `file` part was there, empty. Schemathesis's WSGI transport encodes through
Werkzeug, which writes an empty part with no body at all — its headers' blank line runs straight into
the next boundary, as RFC 2046 allows (`body-part := MIME-part-headers [CRLF *OCTET]`) — and Django's
multipart parser drops such a part. A browser sends the same empty file with an empty body, which Django
reads as a 0-byte file; the server took that one (201, an attachment of nothing). Replayed through
curl, the fuzzer's body had the browser's shape: 201. Now both are refused, and the schema says why."""

from __future__ import annotations

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from aria_project.api import api
from assistant.models import Attachment, Session

pytestmark = pytest.mark.django_db
UPLOAD = "/api/v1/assistant/sessions/{}/attachments/upload"
BOUNDARY = "b0undary"


@pytest.fixture(autouse=True)
def _storage_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def _file_schema() -> dict:
    operation = api.get_openapi_schema()["paths"]["/api/v1/assistant/sessions/{session_id}/attachments/upload"]
    return operation["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]


def _valid_by_schema(content: bytes) -> bool:
    # a binary string's length is its byte count: latin-1 maps each byte to one character
    return jsonschema.Draft202012Validator(_file_schema()).is_valid({"file": content.decode("latin-1")})


def _raw(parts: list[bytes]) -> bytes:
    return b"".join(b"--" + BOUNDARY.encode() + b"\r\n" + part for part in parts) + f"--{BOUNDARY}--\r\n".encode()


def _file_part(content: bytes | None, filename: str = "notes.txt") -> bytes:
    head = f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'.encode()
    head += b"Content-Type: application/octet-stream\r\n"
    # None: Werkzeug's empty part, no body at all; b"": a browser's, an empty body ended by CRLF
    return head + (b"\r\n" if content is None else b"\r\n" + content + b"\r\n")


def _post_raw(client, session: Session, body: bytes):
    return client.post(UPLOAD.format(session.pk), body, content_type=f"multipart/form-data; boundary={BOUNDARY}")


@pytest.fixture
def session(client, operator) -> Session:
    client.force_login(operator)
    return Session.objects.create(owner=operator, title="uploads")


@pytest.mark.parametrize("content", [b"", b"x", b"pump P-02 ran hot\n"])
def test_the_schema_calls_an_upload_valid_exactly_when_the_server_attaches_it(client, session, content):
    response = client.post(UPLOAD.format(session.pk), {"file": SimpleUploadedFile("notes.txt", content)})
    assert response.status_code in (201, 422), response.content
    assert (response.status_code == 201) == _valid_by_schema(content), response.json()
    if response.status_code == 422:
        assert response.json()["field"] == "file" and "empty" in response.json()["detail"]
    assert Attachment.objects.exists() == (response.status_code == 201)


def test_an_empty_part_with_no_body_is_refused_as_the_schema_says(client, session):
    """Werkzeug's encoding of an empty file, with extra form fields the schema allows, as the fuzzer sent it."""
    extras = [
        b'Content-Disposition: form-data; name=""\r\n\r\n{}\r\n',
        b'Content-Disposition: form-data; name="a"\r\n\r\n[]\r\n',
    ]
    response = _post_raw(client, session, _raw([*extras, _file_part(None, filename="file")]))
    assert not _valid_by_schema(b"")
    assert response.status_code == 422 and response.json()["field"].startswith("file"), response.json()
    assert not Attachment.objects.exists()


def test_the_same_part_with_a_body_is_attached(client, session):
    extras = [b'Content-Disposition: form-data; name=""\r\n\r\n{}\r\n']
    response = _post_raw(client, session, _raw([*extras, _file_part(b"valve V-7 sticks", filename="file")]))
    assert response.status_code == 201, response.content
    assert Attachment.objects.get().content_text == "valve V-7 sticks"
