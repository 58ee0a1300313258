"""Governance settings belong to admins, and agent_review / full_autonomy are enforced where they
act (review and publish), not only shown as readiness."""

import pytest
from django.contrib.auth.models import Group

from assistant.conf import get_config
from assistant.models import Draft, PromptVersion, PublishedArtifact, Review, RuntimeConfig
from assistant.services.config import config_update
from assistant.services.drafts import draft_approve
from assistant.services.publish import draft_publish
from assistant.services.review import draft_agent_review
from core.access import APPROVER, OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.errors import Forbidden, InvalidInput
from core.models import AuditRecord
from tests.assistant.factories import PROMPT_SPEC, make_tested_draft, principals, set_config
from tests.fakes.agent_kit import engine_settings

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
TAKEOVER = {
    "approval_policy": "full_autonomy",
    "sandbox_cpu_seconds": 3600,
    "sandbox_memory_mb": 1_000_000,
    "sandbox_wall_seconds": 86_400,
}


def patch(client, data):
    return client.patch(f"{API}/config", data, content_type="application/json")


def post(client, url, data=None):
    return client.post(url, data or {}, content_type="application/json")


def config_audits():
    return AuditRecord.objects.filter(action="assistant.config_update")


def reviewer_says_yes() -> FakeEngine:
    """A provider stand-in whose reviewer approves everything it is shown."""
    verdict = {"decision": "approve", "confidence": 1, "policy_version": "aria-review-v1", "reason": "ok"}
    return FakeEngine(script=[FakeReply(tool_calls=[("submit_review", verdict)])])


@pytest.fixture
def approver_staff(make_user):
    return make_user("ada", APPROVER, OPERATOR, is_staff=True)


# --- the API ----------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["operator", "approver"])
def test_operators_and_approvers_read_but_cannot_patch(client, request, who):
    user = request.getfixturevalue(who)
    client.force_login(user)
    before = get_config()
    assert client.get(f"{API}/config").status_code == 200
    for change in (TAKEOVER, {"approval_policy": "full_autonomy"}, {"reviewer_engine": "fake"}, {"max_turns": 9}):
        response = patch(client, change)
        assert response.status_code == 403, change
        assert response.json()["code"] == "missing_scope"
    assert get_config() == before and not RuntimeConfig.objects.exists()
    assert not config_audits().exists()
    client.logout()
    assert patch(client, TAKEOVER).status_code == 401


def test_admin_patch_is_applied_and_audited_with_before_and_after(client, admin_user):
    set_config(max_turns=6)
    client.force_login(admin_user)
    response = patch(client, {"approval_policy": "agent_review", "max_turns": 4, "sandbox_memory_mb": 1024})
    assert response.status_code == 200, response.content
    assert response.json()["approval_policy"] == "agent_review" and response.json()["bounds"]["max_turns"] == 4
    config = get_config()
    assert (config.approval_policy, config.max_turns, config.sandbox_memory_mb) == ("agent_review", 4, 1024)
    (audit,) = config_audits()
    assert audit.actor == admin_user and audit.target_type == "assistant.config"
    assert audit.details["before"] == {"approval_policy": "manual", "max_turns": 6, "sandbox_memory_mb": 512}
    assert audit.details["after"] == {"approval_policy": "agent_review", "max_turns": 4, "sandbox_memory_mb": 1024}


@pytest.mark.parametrize(
    "field,value",
    [
        ("sandbox_cpu_seconds", 3600),
        ("sandbox_memory_mb", 1_000_000),
        ("sandbox_fsize_mb", 100_000),
        ("sandbox_nofile", 1_000_000),
        ("sandbox_wall_seconds", 86_400),
        ("upload_max_bytes", 10**12),
        ("tool_source_max_bytes", 10**9),
        ("review_ttl_seconds", 10**9),
        ("max_turns", 51),
        ("run_timeout_seconds", 10**6),
        ("reviewer_username", "x" * 500),
    ],
)
def test_over_a_hard_maximum_is_a_422_naming_the_field(client, admin_user, field, value):
    client.force_login(admin_user)
    response = patch(client, {field: value})
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    assert not RuntimeConfig.objects.exists() and not config_audits().exists()
    # the service holds the same bound for any other caller (the admin form, a shell)
    with pytest.raises(InvalidInput) as refused:
        config_update(actor=admin_user, changes={field: value})
    assert refused.value.field == field


def test_the_service_refuses_a_non_admin_whatever_the_entry_point(operator, approver):
    for actor in (operator, approver):
        with pytest.raises(Forbidden):
            config_update(actor=actor, changes={"approval_policy": "full_autonomy"})
    assert not RuntimeConfig.objects.exists() and not config_audits().exists()


def test_a_stored_value_past_a_maximum_falls_back_to_the_default():
    set_config(sandbox_memory_mb=1_000_000, max_turns=5)  # written before the maxima existed
    config = get_config()
    assert (config.sandbox_memory_mb, config.max_turns) == (512, 5)


# --- full_autonomy with the offline reviewer: the reproduced takeover -------------------------


def test_operator_prompt_draft_cannot_reach_published_through_the_fake_reviewer(
    client, operator, admin_user, make_user
):
    # Given: the operator tries the settings takeover and is refused
    client.force_login(operator)
    assert patch(client, TAKEOVER).status_code == 403
    # ...and even when an admin does choose full_autonomy with real principals but the offline
    # engine as reviewer, the review is refused
    principals(make_user)
    config_update(
        actor=admin_user,
        changes={
            "approval_policy": "full_autonomy",
            "reviewer_username": "reviewer-bot",
            "release_username": "release-bot",
        },
    )
    assert client.get(f"{API}/config").json()["full_autonomy"]["ready"] is False
    # When: the operator walks their prompt draft through validate → test → review
    draft_id = post(client, f"{API}/drafts", {"type": "prompt", "name": "investigator", "spec": PROMPT_SPEC}).json()[
        "id"
    ]
    assert post(client, f"{API}/drafts/{draft_id}/validate").json()["status"] == "validated"
    assert post(client, f"{API}/drafts/{draft_id}/test").json()["status"] == "tested"
    reviewed = post(client, f"{API}/drafts/{draft_id}/review")
    # Then: it stays awaiting a human, with the reason recorded
    assert reviewed.status_code == 200 and reviewed.json()["status"] == "tested"
    (review,) = client.get(f"{API}/drafts/{draft_id}/reviews").json()
    assert review["decision"] == "failed" and review["kind"] == "agent"
    assert "the reviewer engine is the offline fake" in review["reason"]
    assert AuditRecord.objects.filter(action="draft.review_refused", target_id=str(draft_id)).exists()
    assert post(client, f"{API}/drafts/{draft_id}/publish").status_code == 409  # nothing approved it
    assert Draft.objects.get(pk=draft_id).status == "tested"
    assert not PromptVersion.objects.exists() and not PublishedArtifact.objects.exists()


def test_full_autonomy_never_makes_the_author_their_own_approver(operator, admin_user, make_user):
    from core.models import ServiceAccount

    # the operator got flagged as the reviewer service account and named as reviewer and release
    ServiceAccount.objects.create(user=operator, role="reviewer")
    operator.groups.add(Group.objects.get_or_create(name=APPROVER)[0])
    with engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9"):
        config_update(
            actor=admin_user,
            changes={
                "approval_policy": "full_autonomy",
                "reviewer_engine": "anthropic",
                "reviewer_username": operator.username,
                "release_username": operator.username,
            },
        )
        draft = draft_agent_review(
            draft=make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="p"),
            actor=operator,
            engine=reviewer_says_yes(),
        )
    assert draft.status == "tested"
    reason = Review.objects.get(draft=draft).reason
    assert "shared identities: author and reviewer" in reason and "author and release" in reason
    assert not PublishedArtifact.objects.exists()


# --- publish time ---------------------------------------------------------------------------


def _agent_approved_draft(operator, make_user, admin_user, policy="agent_review"):
    principals(make_user)
    config_update(
        actor=admin_user,
        changes={
            "approval_policy": policy,
            "reviewer_engine": "anthropic",
            "reviewer_username": "reviewer-bot",
            "release_username": "release-bot",
        },
    )
    return draft_agent_review(draft=make_tested_draft(operator), actor=operator, engine=reviewer_says_yes())


def test_publish_rechecks_the_reviewer_an_agent_approval_from_an_offline_reviewer_does_not_go_live(
    operator, approver, admin_user, make_user
):
    with engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9"):
        draft = _agent_approved_draft(operator, make_user, admin_user)
        assert draft.status == "approved"
        config_update(actor=admin_user, changes={"reviewer_engine": "fake"})
        draft = draft_publish(draft=draft, actor=approver)
    assert draft.status == "publish_failed"
    assert not PublishedArtifact.objects.exists()
    failed = AuditRecord.objects.filter(action="draft.transition", target_id=str(draft.pk)).order_by("-id").first()
    assert "offline fake" in failed.details["reason"]


def test_the_release_principal_publishes_only_under_full_autonomy(operator, admin_user, make_user):
    from django.contrib.auth import get_user_model

    with engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9"):
        draft = _agent_approved_draft(operator, make_user, admin_user, policy="agent_review")
    release = get_user_model().objects.get(username="release-bot")
    with pytest.raises(Forbidden) as refused:
        draft_publish(draft=draft, actor=release)
    assert refused.value.code == "approval_policy"
    assert Draft.objects.get(pk=draft.pk).status == "approved"


def test_a_human_approval_still_publishes_under_manual(operator, approver, make_user):
    draft = draft_approve(draft=make_tested_draft(operator), actor=approver)
    assert draft_publish(draft=draft, actor=make_user("pat", APPROVER)).status == "published"


# --- the Django admin -------------------------------------------------------------------------


def admin_change(client, data):
    import json

    return client.post("/admin/assistant/runtimeconfig/1/change/", {"data": json.dumps(data)})


def test_admin_site_shows_the_config_read_only_to_an_approver(client, approver_staff):
    set_config(max_turns=6)
    client.force_login(approver_staff)
    assert client.get("/admin/assistant/runtimeconfig/1/change/").status_code == 200  # view only
    response = admin_change(client, {"approval_policy": "full_autonomy", "sandbox_memory_mb": 2048})
    assert response.status_code == 403
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 6}
    assert client.get("/admin/assistant/runtimeconfig/add/").status_code == 403
    assert client.post("/admin/assistant/runtimeconfig/1/delete/", {"post": "yes"}).status_code == 403
    assert not config_audits().exists()


def test_admin_site_change_by_a_non_superuser_with_model_permissions_is_refused(client, make_user):
    from django.contrib.auth.models import Permission

    staff = make_user("stan", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__endswith="runtimeconfig"))
    set_config(max_turns=6)
    client.force_login(staff)
    response = admin_change(client, {"approval_policy": "full_autonomy"})
    assert response.status_code == 403
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 6} and not config_audits().exists()


def test_admin_site_change_by_a_superuser_is_bounded_and_audited(client, make_user):
    root = make_user("root", is_staff=True, is_superuser=True)
    set_config(max_turns=6)
    client.force_login(root)
    over = admin_change(client, {"sandbox_memory_mb": 1_000_000})
    assert over.status_code == 200 and b"sandbox_memory_mb" in over.content  # the form shows the error
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 6} and not config_audits().exists()
    done = admin_change(client, {"max_turns": 5, "approval_policy": "agent_review"})
    assert done.status_code == 302
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 5, "approval_policy": "agent_review"}
    (audit,) = config_audits()
    assert audit.actor == root
    assert audit.details["before"] == {"approval_policy": "manual", "max_turns": 6}
    assert audit.details["after"] == {"approval_policy": "agent_review", "max_turns": 5}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_open_drafts_per_author", True),
        ("max_turns", "5"),
        ("max_turns", 5.5),
        ("reasoning", 1),
        ("reasoning", "true"),
        ("review_confidence_floor", True),
        ("run_timeout_seconds", "60"),
    ],
)
def test_a_bool_for_a_number_or_a_number_for_a_bool_is_refused_by_api_form_and_service(
    client, admin_user, make_user, field, value
):
    client.force_login(admin_user)
    response = patch(client, {field: value})
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    with pytest.raises(InvalidInput) as refused:
        config_update(actor=admin_user, changes={field: value})
    assert refused.value.field == field
    assert not RuntimeConfig.objects.exists() and not config_audits().exists()
    set_config(max_turns=6)
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    form = admin_change(client, {field: value})
    assert form.status_code == 200 and field.encode() in form.content  # the form names the key
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 6} and not config_audits().exists()


def test_whole_numbers_and_real_flags_are_accepted(client, admin_user):
    client.force_login(admin_user)
    response = patch(client, {"max_turns": 5.0, "reasoning": True, "run_timeout_seconds": 60})
    assert response.status_code == 200, response.content
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 5, "reasoning": True, "run_timeout_seconds": 60.0}


@pytest.mark.parametrize("raw", ["null", "[]", "", '"a string"', "5"])
def test_admin_form_refuses_a_non_object_rather_than_emptying_the_config(client, make_user, raw):
    set_config(max_turns=6)
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    response = client.post("/admin/assistant/runtimeconfig/1/change/", {"data": raw})
    assert response.status_code == 200 and b"must be a JSON object" in response.content, response.status_code
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 6} and not config_audits().exists()
