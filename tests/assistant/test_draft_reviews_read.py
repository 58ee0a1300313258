"""GET /assistant/drafts/{id}/reviews follows the draft read for review (selectors.draft_get with
for_review): the author, admins, and from `tested` on approvers and the reviewer and release
principals. An approver who is not an operator approves, rejects and publishes a draft; deciding,
they read its earlier reviews too (the route asked for the operator scope: a 403 to them).

Hostile: a peer operator, an approver on another author's draft not yet submitted (the 404 of a
missing id), a user with no scope (the 403 of a role they lack, as for a missing id)."""

from __future__ import annotations

import pytest
from django.test import Client

from assistant.choices import DraftStatus
from assistant.models import Draft
from assistant.services.drafts import draft_create, draft_reject, draft_test, draft_update, draft_validate
from core.access import ADMIN, APPROVER, OPERATOR
from tests.assistant.factories import TOOL_SPEC, make_tested_draft, service_user

pytestmark = pytest.mark.django_db

API = "/api/v1/assistant"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _resubmitted(owner, rejecter) -> Draft:
    """A draft rejected once (with a reason), edited and tested again: back in the approvers' queue."""
    draft = make_tested_draft(owner)
    draft_reject(draft=draft, actor=rejecter, reason="Doubles negatives too: say so in the description.")
    draft = draft_update(draft=Draft.objects.get(pk=draft.pk), actor=owner, spec={**TOOL_SPEC, "description": "x2"})
    draft = draft_validate(draft=draft, actor=owner)
    draft = draft_test(draft=draft, actor=owner)
    assert draft.status == DraftStatus.TESTED
    return draft


def test_an_approver_who_is_not_an_operator_reads_the_earlier_reviews_of_a_draft_they_decide(operator, make_user):
    first = make_user("abe", APPROVER)
    draft = _resubmitted(operator, first)
    deciding = make_user("ava", APPROVER)

    response = _client(deciding).get(f"{API}/drafts/{draft.pk}/reviews")

    assert response.status_code == 200, response.content
    [review] = response.json()
    assert review["decision"] == "reject" and review["kind"] == "manual"
    assert review["reviewer_username"] == "abe" and review["reviewer_id"] == first.pk
    assert review["reason"] == "Doubles negatives too: say so in the description."
    assert review["cleared"] is True and review["candidate_version"] == 1  # of the candidate before the edit
    # the same approver may decide on it: the read and the decision agree
    assert _client(deciding).get(f"{API}/drafts?review=true").json()[0]["id"] == draft.pk
    rejected = _client(deciding).post(f"{API}/drafts/{draft.pk}/reject", {"reason": "still"}, "application/json")
    assert rejected.status_code == 200
    assert [r["reviewer_username"] for r in _client(deciding).get(f"{API}/drafts/{draft.pk}/reviews").json()] == [
        "ava",
        "abe",
    ]


@pytest.mark.parametrize("status", [DraftStatus.DRAFT, DraftStatus.VALIDATED, DraftStatus.TEST_FAILED])
@pytest.mark.parametrize("tail", ["/reviews", ""])
def test_an_approver_gets_the_404_of_a_missing_id_for_another_authors_unsubmitted_draft(
    operator, make_user, status, tail
):
    draft = draft_create(owner=operator, type="tool", name="double", spec=TOOL_SPEC)
    Draft.objects.filter(pk=draft.pk).update(status=status)
    approver = _client(make_user("ava", APPROVER))

    theirs = approver.get(f"{API}/drafts/{draft.pk}{tail}")
    missing = approver.get(f"{API}/drafts/{draft.pk + 1000}{tail}")

    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == missing.json() and theirs.json()["code"] == "not_found"


@pytest.mark.parametrize("tail", ["/reviews", ""])
def test_a_peer_operator_and_a_scopeless_user_read_no_reviews(operator, make_user, tail):
    draft = _resubmitted(operator, make_user("abe", APPROVER))
    peer = _client(make_user("bob", OPERATOR))
    nobody = _client(make_user("nora"))

    for client, status, code in ((peer, 404, "not_found"), (nobody, 403, "missing_scope")):
        theirs = client.get(f"{API}/drafts/{draft.pk}{tail}")
        missing = client.get(f"{API}/drafts/{draft.pk + 1000}{tail}")
        assert (theirs.status_code, theirs.json()["code"]) == (status, code), theirs.content
        assert theirs.json() == missing.json()
        assert "Doubles negatives" not in theirs.content.decode() and "x2" not in theirs.content.decode()
    assert Client().get(f"{API}/drafts/{draft.pk}{tail}").status_code == 401


def test_an_approver_who_is_not_an_operator_reads_the_draft_they_decide(operator, make_user):
    draft = _resubmitted(operator, make_user("abe", APPROVER))

    response = _client(make_user("ava", APPROVER)).get(f"{API}/drafts/{draft.pk}")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["id"] == draft.pk and body["status"] == DraftStatus.TESTED and body["spec"]["description"] == "x2"


def test_the_author_the_principals_and_an_admin_read_the_reviews(operator, make_user):
    draft = _resubmitted(operator, make_user("abe", APPROVER))
    readers = [
        operator,
        service_user(make_user, "reviewer-bot", "reviewer", APPROVER),
        service_user(make_user, "release-bot", "release", OPERATOR),
        make_user("adam", ADMIN),
    ]
    for user in readers:
        response = _client(user).get(f"{API}/drafts/{draft.pk}/reviews")
        assert response.status_code == 200, (user.username, response.content)
        assert [r["reviewer_username"] for r in response.json()] == ["abe"]
