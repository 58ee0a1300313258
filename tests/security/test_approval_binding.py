"""An approval binds to the candidate the approver read. The approver opens a tested draft (v1);
the author edits it, validates and tests it again (v2, tested: back in the queue); the approver's
Approve — sent with the hash of what they read — is a 409 naming `candidate_hash`, and nothing is
approved. Approving what they read still works, and a client that sends no hash is unchanged."""

import pytest

from assistant.models import Draft, Review
from assistant.services.drafts import draft_test, draft_update, draft_validate
from core.models import AuditRecord
from tests.assistant.factories import TOOL_SPEC, make_tested_draft

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
SNEAKY = {**TOOL_SPEC, "source": "def run(params):\n    return {'doubled': params['x'] + params['x']}\n"}


def queued(client, draft_id: int) -> dict:
    return next(d for d in client.get(f"{API}/drafts?review=true").json() if d["id"] == draft_id)


def approve(client, draft_id: int, **body):
    return client.post(f"{API}/drafts/{draft_id}/approve", body, content_type="application/json")


def test_an_approval_of_a_candidate_replaced_since_it_was_read_is_refused(client, operator, approver):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    seen = queued(client, draft.pk)  # what the drawer's review queue shows
    assert seen["version"] == 1

    # the author makes a new candidate and brings it back to `tested`
    replaced = draft_update(draft=draft, actor=operator, spec=SNEAKY)
    replaced = draft_test(draft=draft_validate(draft=replaced, actor=operator), actor=operator)
    assert replaced.status == "tested" and replaced.version == 2

    response = approve(client, draft.pk, reason="looks fine", candidate_hash=seen["content_hash"])
    assert response.status_code == 409, response.content
    body = response.json()
    assert body["code"] == "candidate_changed" and body["field"] == "candidate_hash"
    assert body["version"] == 2
    assert Draft.objects.get(pk=draft.pk).status == "tested"
    assert not Review.objects.filter(draft=draft).exists()
    assert not AuditRecord.objects.filter(action="draft.approve").exists()

    # reading the new candidate, then approving it, works
    again = queued(client, draft.pk)
    response = approve(client, draft.pk, reason="read v2", candidate_hash=again["content_hash"])
    assert response.status_code == 200 and response.json()["status"] == "approved"
    review = Review.objects.get(draft=draft)
    assert (review.candidate_hash, review.candidate_version) == (again["content_hash"], 2)


def test_an_approval_without_a_hash_still_approves_the_current_candidate(client, operator, approver):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    assert approve(client, draft.pk).json()["status"] == "approved"


@pytest.mark.parametrize("value", ["abc", 7, "G" * 64])
def test_a_malformed_hash_is_a_422_naming_the_field(client, operator, approver, value):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    response = approve(client, draft.pk, candidate_hash=value)
    assert response.status_code == 422
    assert response.json()["field"] == "candidate_hash"
    assert Draft.objects.get(pk=draft.pk).status == "tested"


ADMIN_DRAFTS = "/admin/assistant/draft/"


def test_the_admin_approve_names_the_candidate_and_refuses_one_changed_since(client, operator, make_user):
    """The admin console's Approve binds the same way: its page names each candidate (version and
    content hash, carried in the form); a candidate the author replaced before "apply" is refused
    with the reason and stays tested; apply without the page's hash approves nothing."""
    draft = make_tested_draft(operator)
    client.force_login(make_user("ann", "approver", is_staff=True))
    page = client.post(ADMIN_DRAFTS, {"action": "approve", "_selected_action": [draft.pk]})
    assert page.status_code == 200
    assert f'name="hash:{draft.pk}" value="{draft.content_hash}"' in page.content.decode()
    assert Draft.objects.get(pk=draft.pk).status == "tested"  # nothing approved by opening the page

    replaced = draft_update(draft=draft, actor=operator, spec=SNEAKY)
    replaced = draft_test(draft=draft_validate(draft=replaced, actor=operator), actor=operator)
    apply = {"action": "approve", "apply": "1", "_selected_action": [draft.pk]}
    refused = client.post(ADMIN_DRAFTS, {**apply, f"hash:{draft.pk}": draft.content_hash}, follow=True)
    assert "The draft changed since you read it: it is now v2" in refused.content.decode()
    unread = client.post(ADMIN_DRAFTS, apply, follow=True)  # no hash: a hand-made post
    assert "read the candidate first" in unread.content.decode()
    assert Draft.objects.get(pk=draft.pk).status == "tested"
    assert not Review.objects.filter(draft=draft).exists()
    assert not AuditRecord.objects.filter(action="draft.approve").exists()

    client.post(ADMIN_DRAFTS, {**apply, f"hash:{draft.pk}": replaced.content_hash}, follow=True)
    review = Review.objects.get(draft=draft)
    assert (review.candidate_hash, review.candidate_version, review.draft.status) == (
        replaced.content_hash,
        2,
        "approved",
    )
