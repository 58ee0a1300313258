"""Drafts left mid-step by a process that stopped (a restart during a test run, a killed worker):
the watchdog moves them on once the step is past the longest it can take, so their author can edit,
re-run or discard them again; a step still within its time, or one that finished, is left alone.
A tool's test cases are bounded, so that longest time is a real bound."""

from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.choices import DraftStatus as S
from assistant.conf import get_config
from assistant.models import Draft, PublishedArtifact
from assistant.publishers import publish_artifact
from assistant.services.draft_sweep import draft_step_deadline
from assistant.services.drafts import draft_approve, draft_create, draft_transition, draft_validate
from assistant.tasks import expire_stale_runs_task
from assistant.validators import MAX_TOOL_TESTS
from core.models import AuditRecord

from .factories import SKILL_SPEC, TOOL_SPEC, make_tested_draft

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def left_in(draft: Draft, status: str, *, past_deadline: bool = True) -> Draft:
    """The draft as a step leaves it when its process dies: moved into `status`, nothing after."""
    draft = draft_transition(draft=draft, to_status=status, actor=draft.owner)
    if past_deadline:
        ago = timedelta(seconds=draft_step_deadline(status, get_config()) + 1)
        Draft.objects.filter(pk=draft.pk).update(updated=timezone.now() - ago)
    return Draft.objects.get(pk=draft.pk)


def validated_skill(owner) -> Draft:
    return draft_validate(
        draft=draft_create(owner=owner, type="skill", name="pump-checks", spec=SKILL_SPEC), actor=owner
    )


def test_a_draft_left_testing_is_failed_with_the_reason_and_its_author_can_work_on_it(client, operator):
    draft = left_in(validated_skill(operator), S.TESTING)
    client.force_login(operator)
    refused = client.patch(f"{API}/drafts/{draft.pk}", {"name": "pump-checks-2"}, content_type="application/json")
    assert refused.status_code == 409  # what the author saw, for good, before the watchdog

    assert expire_stale_runs_task() == 1
    draft.refresh_from_db()
    assert draft.status == S.TEST_FAILED
    assert draft.test_report["ok"] is False and draft.test_report["error"].startswith("interrupted: still testing")
    record = AuditRecord.objects.filter(target_type="assistant.draft", target_id=str(draft.pk)).latest("id")
    assert record.action == "draft.transition" and record.details["to_status"] == S.TEST_FAILED
    assert record.actor_id is None
    shown = client.get(f"{API}/drafts/{draft.pk}").json()
    assert shown["test_report"]["error"].startswith("interrupted: still testing")  # the drawer shows it

    edited = client.patch(f"{API}/drafts/{draft.pk}", {"name": "pump-checks-2"}, content_type="application/json")
    assert edited.status_code == 200 and edited.json()["status"] == S.DRAFT
    assert client.delete(f"{API}/drafts/{draft.pk}").status_code == 204


@pytest.mark.parametrize(
    "status, failed",
    [(S.VALIDATING, S.VALIDATION_FAILED), (S.REVIEWING, S.REVIEW_FAILED), (S.PUBLISHING, S.PUBLISH_FAILED)],
)
def test_every_step_left_running_ends_in_its_failure(operator, approver, status, failed):
    if status == S.VALIDATING:
        draft = draft_create(owner=operator, type="skill", name="pump-checks", spec=SKILL_SPEC)
    elif status == S.REVIEWING:
        draft = make_tested_draft(operator)
    else:
        draft = draft_approve(draft=make_tested_draft(operator), actor=approver)
    draft = left_in(draft, status)
    assert expire_stale_runs_task() == 1
    draft.refresh_from_db()
    assert draft.status == failed
    if status == S.VALIDATING:
        assert draft.validation_report["ok"] is False


def test_a_publication_that_committed_before_the_process_stopped_is_marked_published(operator, approver):
    draft = left_in(draft_approve(draft=make_tested_draft(operator), actor=approver), S.PUBLISHING, past_deadline=False)
    artifact = publish_artifact(draft, approver)  # committed; the move to `published` never ran
    Draft.objects.filter(pk=draft.pk).update(updated=timezone.now() - timedelta(seconds=3600))
    PublishedArtifact.objects.filter(pk=artifact.pk).update(created=timezone.now() - timedelta(seconds=3500))
    assert expire_stale_runs_task() == 1
    draft.refresh_from_db()
    assert draft.status == S.PUBLISHED
    assert PublishedArtifact.objects.filter(draft=draft).count() == 1  # not published a second time


def test_a_step_still_within_its_time_is_left_alone(operator):
    draft = left_in(validated_skill(operator), S.TESTING, past_deadline=False)
    assert expire_stale_runs_task() == 0
    draft.refresh_from_db()
    assert draft.status == S.TESTING


def test_a_tool_with_more_test_cases_than_the_bound_fails_validation(client, operator):
    client.force_login(operator)
    case = TOOL_SPEC["tests"][0]
    spec = {**TOOL_SPEC, "tests": [case] * (MAX_TOOL_TESTS + 1)}
    did = client.post(
        f"{API}/drafts", {"type": "tool", "name": "double", "spec": spec}, content_type="application/json"
    ).json()["id"]
    report = client.post(f"{API}/drafts/{did}/validate").json()
    assert report["status"] == S.VALIDATION_FAILED
    assert (
        f"tests: at most {MAX_TOOL_TESTS} cases (this spec has {MAX_TOOL_TESTS + 1})."
        in report["validation_report"]["errors"]
    )
    spec["tests"] = [case] * MAX_TOOL_TESTS
    client.patch(f"{API}/drafts/{did}", {"spec": spec}, content_type="application/json")
    assert client.post(f"{API}/drafts/{did}/validate").json()["status"] == S.VALIDATED
