"""A draft names its author: `owner_username` on every draft route (the drawer shows "by <name>",
not "by user #N"), read with the draft in one joined query, and returned as data (JSON), never markup."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assistant.choices import DraftStatus
from assistant.models import Draft
from assistant.services.drafts import (
    draft_approve,
    draft_create,
    draft_reject,
    draft_test,
    draft_transition,
    draft_validate,
)
from assistant.services.sessions import session_create
from core.access import APPROVER, OPERATOR

from .factories import SKILL_SPEC

pytestmark = pytest.mark.django_db
S = DraftStatus
API = "/api/v1/assistant"
HOSTILE = "<img src=x onerror=alert(1)>"


def _drafts(owner, count: int, *, session=None, prefix: str = "skill") -> list[Draft]:
    return [
        draft_create(owner=owner, type="skill", name=f"{prefix}-{owner.pk}-{i}", spec=SKILL_SPEC, session=session)
        for i in range(count)
    ]


def _queries(client, url: str) -> tuple[int, list]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(captured), response.json()


def test_every_draft_route_names_the_author(client, operator, approver):
    session = session_create(owner=operator, mode="build")
    (draft,) = _drafts(operator, 1, session=session)
    client.force_login(operator)
    assert client.get(f"{API}/drafts").json()[0]["owner_username"] == "olga"
    assert client.get(f"{API}/drafts/{draft.pk}").json()["owner_username"] == "olga"
    assert client.get(f"{API}/sessions/{session.pk}/drafts").json()[0]["owner_username"] == "olga"
    created = client.post(
        f"{API}/drafts", {"type": "skill", "name": "fresh", "spec": SKILL_SPEC}, content_type="application/json"
    )
    assert created.status_code == 201 and created.json()["owner_username"] == "olga"

    Draft.objects.filter(pk=draft.pk).update(status=DraftStatus.TESTED)
    client.force_login(approver)
    waiting = client.get(f"{API}/drafts?review=true").json()
    assert [(d["id"], d["owner_id"], d["owner_username"]) for d in waiting] == [(draft.pk, operator.pk, "olga")]


def test_a_markup_username_comes_back_as_plain_json_text(client, make_user, approver):
    # Django's signup validator would refuse it, but users also come from the shell, SSO or LDAP
    author = make_user(HOSTILE, OPERATOR)
    (draft,) = _drafts(author, 1)
    Draft.objects.filter(pk=draft.pk).update(status=DraftStatus.TESTED)
    client.force_login(approver)
    response = client.get(f"{API}/drafts?review=true")
    assert response["Content-Type"].startswith("application/json")
    assert response.json()[0]["owner_username"] == HOSTILE  # the drawer writes it with textContent


@pytest.mark.parametrize("route", ["mine", "session", "review"])
def test_listing_drafts_takes_the_same_queries_for_one_or_many_authors(client, operator, make_user, route):
    reviewer = make_user("rhea", OPERATOR, APPROVER)
    session = session_create(owner=operator, mode="build")
    url = {
        "mine": f"{API}/drafts",
        "session": f"{API}/sessions/{session.pk}/drafts",
        "review": f"{API}/drafts?review=true",
    }[route]
    client.force_login(reviewer if route == "review" else operator)

    def add(count: int) -> None:
        # for review: each draft by another author (their owners are joined, not fetched one by one)
        for i in range(count):
            owner = make_user(f"author-{Draft.objects.count()}-{i}", OPERATOR) if route == "review" else operator
            _drafts(owner, 1, session=session if route == "session" else None, prefix=f"d{Draft.objects.count()}")
        if route == "review":
            Draft.objects.update(status=DraftStatus.TESTED)

    add(1)
    one, listed = _queries(client, url)
    assert len(listed) == 1
    add(5)
    many, listed = _queries(client, url)
    assert len(listed) == 6 and all(d["owner_username"] for d in listed)
    assert many == one


def _move(draft: Draft, actor, to_status: str, reason: str = "") -> Draft:
    return draft_transition(draft=draft, to_status=to_status, actor=actor, **({"reason": reason} if reason else {}))


def _reasoned_drafts(owner, approver, rounds: int, session) -> dict[int, tuple[str, str]]:
    """`rounds` × (publish failed twice, review rejected, review failed, approved), every move with a
    reason naming its draft, one draft's failures after the others': {id: (status, the reason to show)}.
    The approved draft shows none (its move's reason is no failure's)."""
    drafts = []
    for _ in range(rounds):
        for kind in (S.PUBLISH_FAILED, S.REVIEW_REJECTED, S.REVIEW_FAILED, S.APPROVED):
            name = f"d{Draft.objects.count()}"
            draft = draft_create(owner=owner, type="skill", name=name, spec=SKILL_SPEC, session=session)
            drafts.append((draft_test(draft=draft_validate(draft=draft, actor=owner), actor=owner), kind))
    expected = {}
    for draft, kind in drafts:
        reason = {S.REVIEW_REJECTED: "rejected ", S.REVIEW_FAILED: "engine down "}.get(kind, "")
        reason += draft.name if reason else ""
        if kind == S.REVIEW_REJECTED:
            draft_reject(draft=draft, actor=approver, reason=reason)
        elif kind == S.REVIEW_FAILED:
            _move(_move(draft, approver, S.REVIEWING), approver, S.REVIEW_FAILED, reason)
        else:
            draft_approve(draft=draft, actor=approver, reason=f"approved {draft.name}")
        expected[draft.pk] = (kind, reason)
    for attempt in ("1st", "2nd"):  # publishing fails twice, each time after the other drafts' failures
        for draft, kind in drafts:
            if kind == S.PUBLISH_FAILED:
                _move(_move(draft, approver, S.PUBLISHING), approver, S.PUBLISH_FAILED, f"{attempt} {draft.name}")
                expected[draft.pk] = (kind, f"{attempt} {draft.name}")
    return expected


@pytest.mark.parametrize("route", ["mine", "session", "review"])
def test_failed_drafts_list_with_their_own_latest_reason_in_the_same_queries_for_few_or_many(
    client, operator, make_user, route
):
    reviewer = make_user("rhea", OPERATOR, APPROVER)
    session = session_create(owner=operator, mode="build")
    url = {
        "mine": f"{API}/drafts",
        "session": f"{API}/sessions/{session.pk}/drafts",
        "review": f"{API}/drafts?review=true",  # others' approved and publish_failed drafts
    }[route]
    client.force_login(reviewer if route == "review" else operator)

    def listing(expected: dict[int, tuple[str, str]]) -> int:
        count, listed = _queries(client, url)
        shown = {
            pk: reason
            for pk, (status, reason) in expected.items()
            if route != "review" or status in (S.APPROVED, S.PUBLISH_FAILED)
        }
        assert {d["id"]: d["status_reason"] for d in listed} == shown
        return count

    first = _reasoned_drafts(operator, reviewer, 1, session)
    few = listing(first)
    many = listing(first | _reasoned_drafts(operator, reviewer, 1, session))  # a session holds 10 drafts at most
    assert many == few
    for pk, (_, reason) in first.items():  # one draft's own route says the same
        assert client.get(f"{API}/drafts/{pk}").json()["status_reason"] == reason
