import pytest

from assistant.models import Draft
from core.capabilities import CapabilityContext, dispatch


@pytest.mark.django_db
def test_drafts_are_readable_by_their_owner_only(operator, make_user):
    other = make_user("oscar", "operator")
    mine = Draft.objects.create(owner=operator, type="prompt", name="investigator", spec={"text": "x"})
    theirs = Draft.objects.create(owner=other, type="skill", name="theirs", spec={})

    listed = dispatch("assistant.list_drafts", {}, ctx=CapabilityContext(user=operator))
    assert [d["id"] for d in listed.content] == [mine.pk]
    assert listed.content[0]["status"] == "draft"

    got = dispatch("assistant.get_draft", {"draft_id": mine.pk}, ctx=CapabilityContext(user=operator))
    assert got.content["name"] == "investigator"
    hidden = dispatch("assistant.get_draft", {"draft_id": theirs.pk}, ctx=CapabilityContext(user=operator))
    assert hidden.is_error and "not found" in hidden.message.lower()


@pytest.mark.django_db
def test_coordinator_reads_drafts_through_the_assistant(operator):
    draft = Draft.objects.create(owner=operator, type="prompt", name="p", spec={})
    read = dispatch("orchestrator.read_drafts", {}, ctx=CapabilityContext(user=operator))
    assert read.content["available"] is True
    assert [d["id"] for d in read.content["drafts"]] == [draft.pk]
    filtered = dispatch("assistant.list_drafts", {"status": "published"}, ctx=CapabilityContext(user=operator))
    assert filtered.content == []
    bad = dispatch("assistant.list_drafts", {"status": "nonsense"}, ctx=CapabilityContext(user=operator))
    assert bad.is_error and "status" in bad.message
