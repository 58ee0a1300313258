"""Every edge of the draft lifecycle, through the services."""

import pytest

from assistant.choices import DRAFT_TRANSITIONS, DraftStatus
from assistant.models import Draft, Review
from assistant.services.drafts import (
    draft_approve,
    draft_create,
    draft_reject,
    draft_test,
    draft_transition,
    draft_update,
    draft_validate,
)
from assistant.services.publish import draft_publish
from core.audit import audit_verify
from core.errors import Conflict, Forbidden
from core.models import AuditRecord

from .factories import PROMPT_SPEC, SKILL_SPEC, TOOL_SPEC, make_tested_draft, tool_spec

S = DraftStatus
pytestmark = pytest.mark.django_db


def test_the_transition_map_is_exactly_the_issue_lifecycle():
    edges = {(a, b) for a, targets in DRAFT_TRANSITIONS.items() for b in targets}
    assert edges == {
        ("draft", "validating"),
        ("validating", "validated"),
        ("validating", "validation_failed"),
        ("validated", "testing"),
        ("testing", "tested"),
        ("testing", "test_failed"),
        ("tested", "approved"),
        ("tested", "reviewing"),
        ("reviewing", "approved"),
        ("reviewing", "review_rejected"),
        ("reviewing", "review_failed"),
        ("approved", "publishing"),
        ("publishing", "published"),
        ("publishing", "publish_failed"),
        ("publish_failed", "publishing"),
    }


def test_happy_path_manual_approval_and_publish_is_audited(operator, approver, make_user):
    draft = make_tested_draft(operator)
    draft = draft_approve(draft=draft, actor=approver, reason="looks right")
    assert draft.status == S.APPROVED
    publisher = make_user("pat", "approver")
    draft = draft_publish(draft=draft, actor=publisher)
    assert draft.status == S.PUBLISHED
    actions = list(AuditRecord.objects.filter(target_id=str(draft.pk)).values_list("action", flat=True))
    assert actions.count("draft.transition") == 7
    assert "draft.approve" in actions and "draft.publish" in actions
    assert audit_verify() is None


def test_validation_failed_and_test_failed(operator):
    bad = draft_create(owner=operator, type="tool", name="bad", spec=tool_spec("def other(p):\n    return 1"))
    assert draft_validate(draft=bad, actor=operator).status == S.VALIDATION_FAILED
    assert "entrypoint" in bad.validation_report["errors"][0]
    failing = draft_create(
        owner=operator, type="tool", name="boom", spec=tool_spec("def run(p):\n    raise ValueError('x')")
    )
    draft_validate(draft=failing, actor=operator)
    failing = draft_test(draft=failing, actor=operator)
    assert failing.status == S.TEST_FAILED
    assert failing.test_report["cases"][0]["error"] == "ValueError: x"


def test_unexpected_output_fails_the_test(operator):
    spec = {**TOOL_SPEC, "tests": [{"input": {"x": 2}, "expect": {"doubled": 5}}]}
    draft = draft_create(owner=operator, type="tool", name="double", spec=spec)
    draft_validate(draft=draft, actor=operator)
    assert draft_test(draft=draft, actor=operator).test_report["cases"][0]["reason"] == "unexpected output"


@pytest.mark.parametrize(
    "from_status,action",
    [
        ("draft", "test"),
        ("validated", "validate"),
        ("tested", "validate"),
        ("approved", "test"),
        ("published", "validate"),
    ],
)
def test_illegal_moves_are_409_with_the_allowed_ones(operator, from_status, action):
    draft = draft_create(owner=operator, type="skill", name="s", spec=SKILL_SPEC)
    Draft.objects.filter(pk=draft.pk).update(status=from_status)
    draft.refresh_from_db()
    service = {"validate": draft_validate, "test": draft_test}[action]
    with pytest.raises(Conflict) as exc:
        service(draft=draft, actor=operator)
    assert exc.value.extra["allowed"] == sorted(DRAFT_TRANSITIONS[from_status])
    assert Draft.objects.get(pk=draft.pk).status == from_status


def test_publish_needs_an_approved_draft(operator, approver):
    draft = make_tested_draft(operator)
    with pytest.raises(Conflict):
        draft_publish(draft=draft, actor=approver)


def test_author_cannot_approve_or_publish_and_operator_cannot_approve(operator, approver, make_user):
    both = make_user("bob", "operator", "approver")
    draft = make_tested_draft(both)
    with pytest.raises(Forbidden):
        draft_approve(draft=draft, actor=both)
    with pytest.raises(Forbidden):
        draft_approve(draft=draft, actor=operator)
    draft = draft_approve(draft=draft, actor=approver)
    with pytest.raises(Forbidden):
        draft_publish(draft=draft, actor=both)
    # the approver who approved cannot also publish: refused before any move, approval kept
    with pytest.raises(Forbidden, match="reviewer cannot also publish"):
        draft_publish(draft=draft, actor=approver)
    draft.refresh_from_db()
    assert draft.status == S.APPROVED
    assert not AuditRecord.objects.filter(action="draft.transition", details__to_status="publishing").exists()
    # a third person releases with the same approval
    assert draft_publish(draft=draft, actor=make_user("pat", "approver")).status == S.PUBLISHED


def test_manual_reject_goes_through_review_states(operator, approver):
    draft = draft_reject(draft=make_tested_draft(operator), actor=approver, reason="too broad")
    assert draft.status == S.REVIEW_REJECTED
    assert Review.objects.get(draft=draft).decision == "reject"


def test_editing_returns_to_draft_clears_review_and_bumps_version(operator, approver):
    draft = draft_approve(draft=make_tested_draft(operator), actor=approver)
    draft = draft_update(draft=draft, actor=operator, spec={**TOOL_SPEC, "description": "Doubles."})
    assert draft.status == S.DRAFT and draft.version == 2
    assert draft.validation_report == {} and draft.test_report == {}
    assert Review.objects.get(draft=draft).cleared is True
    assert draft.content_hash == draft.compute_hash()


def test_editing_while_busy_is_409(operator):
    draft = draft_create(owner=operator, type="skill", name="s", spec=SKILL_SPEC)
    draft_transition(draft=draft, to_status=S.VALIDATING, actor=operator)
    with pytest.raises(Conflict):
        draft_update(draft=draft, actor=operator, spec=SKILL_SPEC)


def test_out_of_band_change_after_approval_fails_publish_closed(operator, approver, make_user):
    draft = draft_approve(draft=make_tested_draft(operator), actor=approver)
    Draft.objects.filter(pk=draft.pk).update(spec={**TOOL_SPEC, "source": "def run(p):\n    return 'evil'"})
    draft = draft_publish(draft=draft, actor=make_user("pat", "approver"))
    assert draft.status == S.PUBLISH_FAILED


@pytest.mark.parametrize(
    "type,spec,error",
    [
        ("prompt", {"text": "Hello {{who}}", "variables": []}, "not declared"),
        ("prompt", {"text": ""}, "text is required"),
        ("skill", {"instructions": ""}, "instructions are required"),
        ("workflow", {"steps": [{"capability": "nope.nothing", "inputs": {}}]}, "unknown capability"),
        ("mcp_server", {"transport": "carrier-pigeon"}, "transport must be"),
        ("mcp_server", {"transport": "http", "url": "ftp://x"}, "url must be"),
        ("mcp_server", {"transport": "stdio"}, "needs a command"),
        ("tool", {**TOOL_SPEC, "source": "def run(:"}, "does not parse"),
        ("tool", {**TOOL_SPEC, "input_schema": {"type": 12}}, "not a valid JSON Schema"),
        ("tool", {**TOOL_SPEC, "source": "x = 1\n" * 5000}, "tool_source_max_bytes"),
    ],
)
def test_validators_per_type(operator, type, spec, error):
    draft = draft_validate(draft=draft_create(owner=operator, type=type, name="thing", spec=spec), actor=operator)
    assert draft.status == S.VALIDATION_FAILED
    assert any(error in e for e in draft.validation_report["errors"]), draft.validation_report


def test_workflow_validator_checks_inputs_against_the_capability(operator, plant):
    good = {"steps": [{"capability": "workorders.get_failure_history", "inputs": {"cell_id": "{cell_id}"}}]}
    bad = {"steps": [{"capability": "workorders.get_failure_history", "inputs": {}}]}
    assert (
        draft_validate(draft=draft_create(owner=operator, type="workflow", name="w", spec=good), actor=operator).status
        == S.VALIDATED
    )
    assert (
        draft_validate(draft=draft_create(owner=operator, type="workflow", name="w2", spec=bad), actor=operator).status
        == S.VALIDATION_FAILED
    )


def test_prompt_and_skill_drafts_pass_through(operator):
    assert make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="investigator").status == S.TESTED
    assert make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name="pure-tools").status == S.TESTED


def test_every_change_is_a_draft_updated_event(operator):
    from core.models import Event

    draft = draft_create(owner=operator, type="skill", name="s", spec=SKILL_SPEC)
    draft_validate(draft=draft, actor=operator)
    draft_update(draft=draft, actor=operator, spec=SKILL_SPEC)
    payloads = [e.payload for e in Event.objects.filter(type="draft_updated")]
    assert [(p["status"], p["version"]) for p in payloads] == [
        ("draft", 1),
        ("validating", 1),
        ("validated", 1),
        ("draft", 2),
    ]
    assert payloads[0] == {
        "draft_id": draft.pk,
        "draft_type": "skill",
        "name": "s",
        "status": "draft",
        "version": 1,
        "owner_id": operator.pk,  # private to the author (core.events.private_scope)
    }


def test_only_the_author_edits_so_an_editor_never_approves_their_own_words(operator, admin_user):
    draft = make_tested_draft(operator)
    with pytest.raises(Forbidden):
        draft_update(draft=draft, actor=admin_user, spec=TOOL_SPEC)
    assert Draft.objects.get(pk=draft.pk).status == S.TESTED


def test_the_draft_list_gives_the_callers_drafts_in_no_session(client, operator, make_user):
    from assistant.services.sessions import session_create
    from core.access import OPERATOR

    session = session_create(owner=operator, title="build")
    in_session = draft_create(owner=operator, type="skill", name="in-session", spec=SKILL_SPEC, session=session)
    loose = draft_create(owner=operator, type="skill", name="loose", spec=SKILL_SPEC)
    draft_create(owner=make_user("otto", OPERATOR), type="skill", name="ottos", spec=SKILL_SPEC)
    client.force_login(operator)
    listed = client.get("/api/v1/assistant/drafts?without_session=true").json()
    assert [d["id"] for d in listed] == [loose.pk]
    both = client.get(f"/api/v1/assistant/drafts?session_id={session.pk}").json()
    assert [d["id"] for d in both] == [in_session.pk]
