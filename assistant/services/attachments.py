"""Session attachments: text snapshots capped at 50,000 characters, at most 25 per session."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import default_storage
from django.db import transaction

from assistant import selectors
from assistant.choices import AttachmentKind
from assistant.conf import get_config
from assistant.library import render_library_resource
from assistant.models import Attachment, Session
from core.errors import InvalidInput, NotFound, PayloadTooLarge

TEXT_TYPES = {".txt", ".md", ".csv", ".json", ".pdf", ".log", ".yaml", ".yml", ".py"}


def _snapshot(text: str) -> tuple[str, bool]:
    limit = Attachment.CONTENT_LIMIT
    return (text[:limit], True) if len(text) > limit else (text, False)


def _create(
    *, session: Session, kind: str, name: str, text: str, store: Callable[[], dict] | None = None, **fields
) -> Attachment:
    """The row, after the per-session count check; `store` (an upload's file write) runs only once
    the count allows it, and returns the fields it sets (the storage key)."""
    with transaction.atomic():
        Session.objects.select_for_update().filter(pk=session.pk).first()  # serialise the count check
        if session.attachments.count() >= Attachment.PER_SESSION_LIMIT:
            raise InvalidInput(
                f"A session holds at most {Attachment.PER_SESSION_LIMIT} attachments.", field="attachments"
            )
        content, truncated = _snapshot(text)
        if store is not None:
            fields.update(store())
        return Attachment.objects.create(
            session=session, kind=kind, name=name[:200], content_text=content, truncated=truncated, **fields
        )


def _pdf_text(data: bytes, field: str) -> str:
    from pypdf import PdfReader  # lazy: pypdf loads only for a PDF attachment

    try:
        reader = PdfReader(io.BytesIO(data))
        text = "\n\n".join((page.extract_text() or "") for page in reader.pages)
    except Exception as exc:  # a hostile PDF breaks pypdf in many ways (TypeError, LimitReachedError, …)
        raise InvalidInput(f"Could not read the PDF: {type(exc).__name__}: {exc}"[:300], field=field) from exc
    return text.replace("\x00", "")  # an extraction artefact; PostgreSQL text cannot hold it


def extract_text(name: str, data: bytes, *, field: str = "file") -> str:
    """Text of a txt/md/csv/json/pdf upload (others: decoded as UTF-8 if they are text). A file that
    cannot be read as what its name says is a 422 naming `field`, never a 500."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix == ".pdf":
        return _pdf_text(data, field)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput("Only text files (txt, md, csv, json) and PDFs can be attached.", field=field) from None
    if "\x00" in text:  # binary content under a text name (and PostgreSQL text cannot hold NUL)
        raise InvalidInput("The file holds NUL characters: attach a text file or a PDF.", field=field)
    if suffix == ".json":
        try:
            return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
        except RecursionError:
            raise InvalidInput("Invalid JSON: nested too deeply.", field=field) from None
        except ValueError as exc:
            raise InvalidInput(f"Invalid JSON: {exc}", field=field) from exc
    if suffix == ".csv":
        try:
            rows = list(csv.reader(io.StringIO(text)))
        except csv.Error as exc:  # e.g. a field past csv.field_size_limit()
            raise InvalidInput(f"Could not read the CSV: {exc}", field=field) from exc
        return "\n".join(" | ".join(row) for row in rows)
    return text


def attachment_add_text(*, session: Session, name: str, text: str) -> Attachment:
    if not text.strip():
        raise InvalidInput("text is required.", field="text")
    return _create(session=session, kind=AttachmentKind.TEXT_SNIPPET, name=name or "snippet", text=text)


def attachment_upload(*, session: Session, name: str, data: bytes, content_type: str = "") -> Attachment:
    limit = get_config().upload_max_bytes
    if len(data) > limit:
        raise PayloadTooLarge(f"Upload is larger than {limit} bytes.", field="file", limit=limit)
    if not data:  # nothing to attach (the schema's minLength: 1)
        raise InvalidInput("The file is empty.", field="file")
    suffix = PurePosixPath(name).suffix.lower()
    if suffix and suffix not in TEXT_TYPES:
        raise InvalidInput(f"Unsupported file type {suffix}.", field="file")
    text = extract_text(name, data)
    saved: list[str] = []

    def store() -> dict:
        saved.append(default_storage.save(f"assistant/{session.pk}/{PurePosixPath(name).name}", io.BytesIO(data)))
        return {"key": saved[0]}

    try:
        return _create(
            session=session,
            kind=AttachmentKind.UPLOAD,
            name=name,
            text=text,
            store=store,
            bucket="default",
            content_type=content_type[:100],
            size=len(data),
        )
    except BaseException:
        for key in saved:  # the row was not written: neither is the file
            default_storage.delete(key)
        raise


OBJECT_KEY_MAX_CHARS = 512
_NO_SUCH_OBJECT = "No such object in your sessions or the shared library."


def object_key_clean(key: str) -> str:
    """A plain relative storage key, or a 422 naming `key`: not empty, no absolute path, no
    backslash, drive letter or control character (NUL included), no empty, `.` or `..` segment."""
    if not isinstance(key, str) or not key.strip():
        raise InvalidInput("key is required for an object file.", field="key")
    if len(key) > OBJECT_KEY_MAX_CHARS:
        raise InvalidInput(f"key is longer than {OBJECT_KEY_MAX_CHARS} characters.", field="key")
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise InvalidInput("key must not contain control characters.", field="key")
    if key.startswith("/") or "\\" in key or re.match(r"^[A-Za-z]:", key):
        raise InvalidInput("key must be a relative path with forward slashes.", field="key")
    if any(part in ("", ".", "..") for part in key.split("/")):
        raise InvalidInput("key must not contain empty, '.' or '..' segments.", field="key")
    return key


def _read_object(key: str, limit: int) -> tuple[int, bytes]:
    """Size and bytes of a stored file; anything that is not a readable file is 'no such object'."""
    try:
        if not default_storage.exists(key):
            raise NotFound(_NO_SUCH_OBJECT, field="key")
        size = default_storage.size(key)
        if size > limit:
            raise PayloadTooLarge(f"Object is larger than {limit} bytes.", field="key", limit=limit)
        with default_storage.open(key, "rb") as fh:
            return size, fh.read(limit + 1)
    except (OSError, SuspiciousFileOperation):  # a folder, a vanished file, a path outside storage
        raise NotFound(_NO_SUCH_OBJECT, field="key") from None


def attachment_object_file(
    *, session: Session, user: AbstractBaseUser, bucket: str, key: str, name: str = ""
) -> Attachment:
    """A file already in Django storage (the `default` bucket): under one of the caller's own
    sessions or the admin-configured shared library (admins: anywhere). A key the caller may not
    see and a key that does not exist get the same 404, so keys cannot be probed."""
    if bucket != "default":
        raise InvalidInput("Only the default storage bucket is configured.", field="bucket")
    key = object_key_clean(key)
    config = get_config()
    if not selectors.object_key_visible(user, key, shared_prefix=config.shared_object_prefix):
        raise NotFound(_NO_SUCH_OBJECT, field="key")
    size, data = _read_object(key, config.upload_max_bytes)
    return _create(
        session=session,
        kind=AttachmentKind.OBJECT_FILE,
        name=name or PurePosixPath(key).name,
        text=extract_text(key, data, field="key"),
        bucket=bucket,
        key=key,
        size=size,
    )


def attachment_library_resource(
    *, session: Session, user: AbstractBaseUser, resource_type: str, ref: str
) -> Attachment:
    name, text = render_library_resource(user=user, resource_type=resource_type, ref=ref)
    return _create(
        session=session, kind=AttachmentKind.LIBRARY_RESOURCE, name=name, text=text, key=f"{resource_type}:{ref}"
    )


def attachment_delete(*, attachment: Attachment) -> None:
    if attachment.kind == AttachmentKind.UPLOAD and attachment.key:
        default_storage.delete(attachment.key)
    attachment.delete()
