"""An author discards a draft (DELETE /drafts/{id}) and holds at most max_open_drafts_per_author
unpublished drafts, whatever the route that creates them (API, session, capability)."""

import pytest

from assistant.models import Draft, PublishedArtifact
from assistant.services.drafts import draft_approve, draft_create, draft_update
from assistant.services.publish import draft_publish
from core.models import AuditRecord, Event

from .factories import SKILL_SPEC, make_tested_draft, set_config

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def create(client, name: str):
    return client.post(
        f"{API}/drafts", {"type": "skill", "name": name, "spec": SKILL_SPEC}, content_type="application/json"
    )


def test_the_author_discards_a_draft_audited_and_announced(client, operator):
    client.force_login(operator)
    draft_id = create(client, "one").json()["id"]
    before = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0

    assert client.delete(f"{API}/drafts/{draft_id}").status_code == 204

    assert not Draft.objects.filter(pk=draft_id).exists()
    record = AuditRecord.objects.get(action="draft.discard", target_id=str(draft_id))
    assert record.actor_id == operator.pk and record.details["name"] == "one" and record.details["version"] == 1
    event = Event.objects.filter(type="draft_updated", id__gt=before).get()
    assert event.payload["status"] == "discarded" and event.payload["owner_id"] == operator.pk
    assert client.delete(f"{API}/drafts/{draft_id}").status_code == 404  # gone


def test_another_operator_cannot_discard_it_or_learn_it_exists(client, operator, make_user):
    draft = draft_create(owner=operator, type="skill", name="mine", spec=SKILL_SPEC)
    client.force_login(make_user("mallory", "operator"))
    response = client.delete(f"{API}/drafts/{draft.pk}")
    assert response.status_code == 404 and Draft.objects.filter(pk=draft.pk).exists()
    assert not AuditRecord.objects.filter(action="draft.discard").exists()


def test_an_approver_cannot_discard_someone_elses_draft_waiting_for_them(client, operator, approver, make_user):
    draft = make_tested_draft(operator)
    client.force_login(approver)
    assert client.delete(f"{API}/drafts/{draft.pk}").status_code == 403  # discarding is an author's act
    client.force_login(make_user("ann", "approver", "operator"))  # may review it, may not discard it
    assert client.delete(f"{API}/drafts/{draft.pk}").status_code == 404
    assert Draft.objects.filter(pk=draft.pk).exists()


def test_a_draft_mid_step_is_not_discarded(client, operator):
    draft = draft_create(owner=operator, type="skill", name="busy", spec=SKILL_SPEC)
    Draft.objects.filter(pk=draft.pk).update(status="testing")
    client.force_login(operator)
    response = client.delete(f"{API}/drafts/{draft.pk}")
    assert response.status_code == 409 and "testing" in response.json()["detail"]
    assert Draft.objects.filter(pk=draft.pk).exists()


def test_a_draft_published_once_stays_even_after_an_edit(client, operator, approver, make_user):
    publisher = make_user("pat", "approver")
    draft = draft_publish(draft=draft_approve(draft=make_tested_draft(operator), actor=approver), actor=publisher)
    assert draft.status == "published"
    client.force_login(operator)
    assert client.delete(f"{API}/drafts/{draft.pk}").status_code == 409

    draft_update(draft=draft, actor=operator, name="double-v2")  # back to `draft`, still behind the artifact
    response = client.delete(f"{API}/drafts/{draft.pk}")
    assert response.status_code == 409 and "published" in response.json()["detail"]
    assert PublishedArtifact.objects.get().draft_id == draft.pk


def test_the_open_drafts_bound_holds_on_every_route_and_a_discard_frees_a_place(client, operator, make_user):
    set_config(max_open_drafts_per_author=2)
    client.force_login(operator)
    first = create(client, "a").json()["id"]
    draft_create(owner=operator, type="skill", name="b", spec=SKILL_SPEC)  # the capability's route

    refused = create(client, "c")
    assert refused.status_code == 422
    body = refused.json()
    assert (
        body["field"] == "drafts" and body["code"] == "draft_limit" and "max_open_drafts_per_author" in body["detail"]
    )
    assert Draft.objects.filter(owner=operator).count() == 2  # nothing written

    other = make_user("olive", "operator")  # the bound is per author
    assert draft_create(owner=other, type="skill", name="c", spec=SKILL_SPEC).pk

    assert client.delete(f"{API}/drafts/{first}").status_code == 204
    assert create(client, "c").status_code == 201


def test_published_drafts_do_not_count_against_the_bound(operator, approver, make_user):
    publisher = make_user("pat", "approver")
    draft_publish(draft=draft_approve(draft=make_tested_draft(operator), actor=approver), actor=publisher)
    set_config(max_open_drafts_per_author=1)
    assert draft_create(owner=operator, type="skill", name="next", spec=SKILL_SPEC).pk


def test_the_bound_is_a_governance_setting_with_a_hard_maximum(client, admin_user):
    from assistant.conf import get_config

    set_config(max_open_drafts_per_author=5000)  # past the hard maximum: the default stands
    assert get_config().max_open_drafts_per_author == 100
    client.force_login(admin_user)
    response = client.patch(f"{API}/config", {"max_open_drafts_per_author": 5000}, content_type="application/json")
    assert response.status_code == 422
