"""Publishing is refused before any move when separation of duties forbids it, and a failed
publication is retried once its cause is fixed."""

import pytest

from assistant.models import Draft, PublishedArtifact
from assistant.services.config import config_update
from assistant.services.drafts import draft_approve
from assistant.services.publish import draft_publish
from assistant.services.review import draft_agent_review
from core.agents.engines.fake import FakeEngine, FakeReply
from core.models import AuditRecord
from tests.assistant.factories import make_tested_draft, principals
from tests.fakes.agent_kit import engine_settings

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def post(client, url):
    return client.post(url, {}, content_type="application/json")


def test_the_approver_who_approved_gets_403_with_the_reason_and_another_approver_publishes(
    client, operator, approver, make_user
):
    draft = draft_approve(draft=make_tested_draft(operator), actor=approver)
    moves_before = AuditRecord.objects.filter(action="draft.transition").count()

    client.force_login(approver)
    response = post(client, f"{API}/drafts/{draft.pk}/publish")
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "separation_of_duties" and "reviewer cannot also publish" in body["detail"]
    draft.refresh_from_db()
    assert draft.status == "approved" and draft.reviews.filter(cleared=False, decision="approve").exists()
    assert AuditRecord.objects.filter(action="draft.transition").count() == moves_before
    assert not PublishedArtifact.objects.exists()

    client.force_login(make_user("pat", "approver"))
    response = post(client, f"{API}/drafts/{draft.pk}/publish")
    assert response.status_code == 200 and response.json()["status"] == "published"
    assert PublishedArtifact.objects.filter(name="double", active=True).count() == 1


def test_the_author_is_refused_before_any_move(client, make_user):
    author = make_user("bob", "operator", "approver")
    draft = draft_approve(draft=make_tested_draft(author), actor=make_user("april2", "approver"))
    client.force_login(author)
    response = post(client, f"{API}/drafts/{draft.pk}/publish")
    assert response.status_code == 403 and response.json()["code"] == "separation_of_duties"
    assert Draft.objects.get(pk=draft.pk).status == "approved"


def test_publish_failed_says_why_and_is_retried_once_the_cause_is_fixed(
    client, operator, approver, make_user, admin_user
):
    verdict = {"decision": "approve", "confidence": 1, "policy_version": "aria-review-v1", "reason": "ok"}
    principals(make_user)
    with engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9"):
        config_update(
            actor=admin_user,
            changes={
                "approval_policy": "agent_review",
                "reviewer_engine": "anthropic",
                "reviewer_username": "reviewer-bot",
                "release_username": "release-bot",
            },
        )
        draft = draft_agent_review(
            draft=make_tested_draft(operator),
            actor=operator,
            engine=FakeEngine(script=[FakeReply(tool_calls=[("submit_review", verdict)])]),
        )
        assert draft.status == "approved"
        config_update(actor=admin_user, changes={"reviewer_engine": "fake"})  # the cause
        client.force_login(approver)
        response = post(client, f"{API}/drafts/{draft.pk}/publish")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "publish_failed" and "offline fake" in body["status_reason"]
        assert not PublishedArtifact.objects.exists()

        # still failing while the cause stands: the retry records the same reason, nothing goes live
        assert post(client, f"{API}/drafts/{draft.pk}/publish").json()["status"] == "publish_failed"
        config_update(actor=admin_user, changes={"reviewer_engine": "anthropic"})  # fixed
        response = post(client, f"{API}/drafts/{draft.pk}/publish")
    assert response.json()["status"] == "published" and response.json()["status_reason"] == ""
    assert PublishedArtifact.objects.filter(name="double", active=True).count() == 1


def test_a_published_draft_cannot_be_published_again(operator, approver, make_user):
    from core.errors import Conflict

    draft = draft_publish(
        draft=draft_approve(draft=make_tested_draft(operator), actor=approver), actor=make_user("pat", "approver")
    )
    with pytest.raises(Conflict):
        draft_publish(draft=draft, actor=make_user("pat2", "approver"))


def test_the_review_listing_is_for_approvers_and_shows_others_waiting_drafts(client, operator, approver, make_user):
    waiting = make_tested_draft(operator)
    own = make_tested_draft(approver, name="mine")
    client.force_login(operator)
    assert client.get(f"{API}/drafts?review=true").status_code == 403
    client.force_login(approver)
    listed = client.get(f"{API}/drafts?review=true").json()
    assert [d["id"] for d in listed] == [waiting.pk]  # not their own: they could not approve it
    assert own.pk not in [d["id"] for d in listed]


def _listed(client, url: str, draft_id: int) -> dict:
    return next(d for d in client.get(url).json() if d["id"] == draft_id)


def test_drafts_say_to_whom_publishing_is_offered_by_the_services_own_rule_and_the_api_still_refuses(
    client, operator, approver, make_user
):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    waiting = _listed(client, f"{API}/drafts?review=true", draft.pk)
    assert (waiting["can_publish"], waiting["publish_refusal"]) == (False, "")  # tested: nothing to publish yet
    approved = client.post(
        f"{API}/drafts/{draft.pk}/approve", {"candidate_hash": draft.content_hash}, content_type="application/json"
    )
    assert approved.status_code == 200 and approved.json()["can_publish"] is False

    # the approver who approved: not offered, told who may
    shown = _listed(client, f"{API}/drafts?review=true", draft.pk)
    assert shown["status"] == "approved" and shown["can_publish"] is False
    assert "another approver or the release principal" in shown["publish_refusal"]
    # hostile: posting anyway is still refused with the same reason, nothing moves
    response = post(client, f"{API}/drafts/{draft.pk}/publish")
    assert response.status_code == 403 and response.json()["detail"] == shown["publish_refusal"]
    assert Draft.objects.get(pk=draft.pk).status == "approved" and not PublishedArtifact.objects.exists()

    client.force_login(operator)  # the author
    for mine in (_listed(client, f"{API}/drafts", draft.pk), client.get(f"{API}/drafts/{draft.pk}").json()):
        assert mine["can_publish"] is False and "author cannot publish" in mine["publish_refusal"]

    client.force_login(make_user("pat", "approver"))  # another approver: offered, and the service agrees
    offered = _listed(client, f"{API}/drafts?review=true", draft.pk)
    assert (offered["can_publish"], offered["publish_refusal"]) == (True, "")
    response = post(client, f"{API}/drafts/{draft.pk}/publish")
    assert response.status_code == 200 and response.json()["status"] == "published"
    assert response.json()["can_publish"] is False
