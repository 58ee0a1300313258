"""Session attachments: JSON (snippet, library resource, object file) and multipart upload."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import File, Router, Status
from ninja.files import UploadedFile

from assistant import selectors
from assistant.api.schemas import AttachmentIn, AttachmentOut
from assistant.conf import get_config
from assistant.services.attachments import (
    attachment_add_text,
    attachment_delete,
    attachment_library_resource,
    attachment_object_file,
    attachment_upload,
)
from core.access import OPERATOR, require_scopes
from core.errors import PayloadTooLarge

router = Router(tags=["assistant"])


@router.get("/sessions/{session_id}/attachments", response=list[AttachmentOut])
def list_attachments(request: HttpRequest, session_id: int) -> list:
    require_scopes(request.user, OPERATOR)
    return list(selectors.session_get(request.user, session_id).attachments.all())


@router.post("/sessions/{session_id}/attachments", response={201: AttachmentOut})
def add_attachment(request: HttpRequest, session_id: int, payload: AttachmentIn) -> Status:
    require_scopes(request.user, OPERATOR)
    session = selectors.session_owned(request.user, session_id)  # what its turns read: the owner's alone
    if payload.kind == "text_snippet":
        attachment = attachment_add_text(session=session, name=payload.name, text=payload.text)
    elif payload.kind == "library_resource":
        attachment = attachment_library_resource(
            session=session, user=request.user, resource_type=payload.resource_type, ref=payload.ref
        )
    else:
        attachment = attachment_object_file(
            session=session, user=request.user, bucket=payload.bucket, key=payload.key, name=payload.name
        )
    return Status(201, attachment)


# A file of at least one byte: an empty one attaches nothing and is refused (attachment_upload).
# Said in the schema (minLength), also because an empty part may arrive with no body at all (RFC 2046 allows it; Werkzeug's
# encoder, Schemathesis's WSGI transport, writes it so), which Django's parser drops: "file: Field required".
class NonEmptyFile(UploadedFile):
    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        return {**super().__get_pydantic_json_schema__(core_schema, handler), "minLength": 1}


@router.post("/sessions/{session_id}/attachments/upload", response={201: AttachmentOut})
def upload_attachment(request: HttpRequest, session_id: int, file: File[NonEmptyFile]) -> Status:
    require_scopes(request.user, OPERATOR)
    session = selectors.session_owned(request.user, session_id)
    limit = get_config().upload_max_bytes
    if file.size > limit:  # refuse before reading it into memory
        raise PayloadTooLarge(f"Upload is larger than {limit} bytes.", field="file", limit=limit)
    attachment = attachment_upload(
        session=session, name=file.name or "upload", data=file.read(), content_type=file.content_type or ""
    )
    return Status(201, attachment)


@router.delete("/attachments/{attachment_id}", response={204: None})
def delete_attachment(request: HttpRequest, attachment_id: int) -> Status:
    require_scopes(request.user, OPERATOR)
    attachment_delete(attachment=selectors.attachment_owned(request.user, attachment_id))
    return Status(204, None)
