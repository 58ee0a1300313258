"""What the coordinator reads and decides of drafts (assistant/coordinator_capabilities.py): scoped
like the drafts routes, `your_moves` agreeing with the services, a listing in constant queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assistant.services.drafts import draft_approve
from core.access import APPROVER, OPERATOR
from core.capabilities import CapabilityContext, dispatch

from .factories import SKILL_SPEC, make_tested_draft

pytestmark = pytest.mark.django_db


def listed(user, **args):
    result = dispatch("assistant.list_draft_reviews", args, ctx=CapabilityContext(user=user))
    assert not result.is_error, result.message
    return {row["draft_id"]: row for row in result.content}


def test_moves_follow_scope_and_separation_of_duties(operator, make_user):
    alice, bob = make_user("alice", OPERATOR, APPROVER), make_user("bob", OPERATOR, APPROVER)
    tested = make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name="t")
    approved = draft_approve(draft=make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name="a"), actor=alice)
    own = make_tested_draft(alice, spec=SKILL_SPEC, type="skill", name="hers")
    as_alice = listed(alice)
    assert as_alice[tested.pk]["your_moves"] == ["approve", "reject"]
    assert as_alice[approved.pk]["your_moves"] == []  # she approved it: another approver publishes
    assert as_alice[own.pk]["your_moves"] == [] and as_alice[own.pk]["owner"] == "alice"
    assert listed(bob)[approved.pk]["your_moves"] == ["publish"]
    as_author = listed(operator)
    assert set(as_author) == {tested.pk, approved.pk} and all(r["your_moves"] == [] for r in as_author.values())
    assert listed(make_user("mallory", OPERATOR)) == {}  # another operator sees none of them


def test_a_listing_costs_the_same_for_two_drafts_or_six(operator, make_user, settings):
    settings.ARIA_REGISTRY_REFRESH_SECONDS = 3600  # the registry's own refresh is not the listing's cost
    alice, bob = make_user("alice", OPERATOR, APPROVER), make_user("bob", OPERATOR, APPROVER)

    def queries():
        with CaptureQueriesContext(connection) as captured:
            listed(bob, limit=50)
        return len(captured)

    for name in ("a", "b"):
        draft_approve(draft=make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name=name), actor=alice)
    queries()  # the first dispatch may still refresh the registry
    two = queries()
    for name in ("c", "d", "e", "f"):
        draft_approve(draft=make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name=name), actor=alice)
    assert len(listed(bob, limit=50)) == 6 and queries() == two
