import pytest

from assistant.models import Draft
from core.capabilities import CapabilityContext, Tier, dispatch, registry
from core.models import AuditRecord, Event


@pytest.mark.django_db
def test_create_draft_is_owned_by_the_caller_audited_and_stays_a_draft(operator):
    assert registry.get("assistant.create_draft").tier == Tier.MUTATE
    spec = {"instructions": "Check the pump seal first.", "triggers": ["seal"]}
    out = dispatch(
        "assistant.create_draft",
        {"type": "skill", "name": "seal_check", "spec": spec},
        ctx=CapabilityContext(user=operator),
    )
    assert not out.is_error, out.message
    draft = Draft.objects.get(pk=out.content["draft_id"])
    assert draft.owner == operator and draft.status == "draft" and draft.spec == spec
    assert out.content["status"] == "draft" and "seal_check" in out.content["summary"]
    audit = AuditRecord.objects.get(action="draft.create", target_id=str(draft.pk))
    assert audit.actor_id == operator.pk
    event = Event.objects.filter(type="draft_updated").latest("id")
    assert event.payload["draft_id"] == draft.pk and event.payload["status"] == "draft"


@pytest.mark.django_db
def test_create_draft_rejects_a_bad_type_as_a_tool_error(operator):
    bad = dispatch(
        "assistant.create_draft", {"type": "spell", "name": "x", "spec": {}}, ctx=CapabilityContext(user=operator)
    )
    assert bad.is_error and "draft type" in bad.message
    blank = dispatch(
        "assistant.create_draft", {"type": "skill", "name": "  ", "spec": {}}, ctx=CapabilityContext(user=operator)
    )
    assert blank.is_error and "name" in blank.message
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_create_draft_needs_the_operator_scope(make_user):
    nobody = make_user("nora")
    out = dispatch(
        "assistant.create_draft", {"type": "skill", "name": "x", "spec": {}}, ctx=CapabilityContext(user=nobody)
    )
    assert out.is_error and "Permission denied" in out.message and not Draft.objects.exists()
