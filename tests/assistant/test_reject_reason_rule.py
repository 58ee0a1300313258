"""A draft rejection carries a reason (draft_reject refuses a blank one, and the drawer shows its
message); the schema of POST /assistant/drafts/{id}/reject says so: the reason is required and not
blank. The schema's verdict and the server's answer agree, body by body."""

from __future__ import annotations

import json

import pytest

from assistant.choices import DraftStatus
from assistant.models import Draft
from tests.assistant.factories import make_tested_draft
from tests.openapi_bodies import schema_accepts

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        {"reason": "Too broad: narrow it to one cell."},
        {},  # the case found: the schema took no reason (default ""), the server refused it
        {"reason": ""},
        {"reason": "   "},
        {"reason": "\u2029\u202f\x1c"},  # blank to str.strip()
        {"reason": "\u200b"},  # not whitespace to str.strip(): a reason, if a strange one
        {"reason": "x" * 4001},
    ],
)
def test_the_schema_calls_a_rejection_valid_exactly_when_the_server_rejects(client, operator, approver, body):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    valid_by_schema = schema_accepts("/api/v1/assistant/drafts/{draft_id}/reject", body)
    response = client.post(
        f"/api/v1/assistant/drafts/{draft.pk}/reject", json.dumps(body), content_type="application/json"
    )
    assert response.status_code in (200, 422), response.content
    assert (response.status_code == 200) == valid_by_schema, (body, response.json())
    if response.status_code == 422:
        assert response.json()["field"] == "reason", response.json()
    expected = DraftStatus.REVIEW_REJECTED if valid_by_schema else DraftStatus.TESTED
    assert Draft.objects.get(pk=draft.pk).status == expected


def test_a_blank_reason_is_refused_with_the_message_the_drawer_shows(client, operator, approver):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    response = client.post(f"/api/v1/assistant/drafts/{draft.pk}/reject", {"reason": " "}, "application/json")
    assert response.status_code == 422
    assert "needs a reason" in response.json()["detail"]
