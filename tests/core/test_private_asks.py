"""Asks and drafts are their deciders' on the bus, not every signed-in user's.

`interaction_needed` (a plan's question, which may name plant details) reaches the plan owner and,
for a gated step, the approvers who may decide it; `draft_updated` (draft names) reaches the
author and, while the draft enters or leaves their queue, the approvers. Each gets a private copy
(core.events.private_scope with several users); another operator's socket never gets any, live or
on replay."""

from typing import Any

import pytest
from asgiref.sync import sync_to_async

from assistant.choices import DraftStatus
from assistant.services.drafts import draft_approve, draft_create
from core.access import ADMIN, APPROVER, OPERATOR
from core.events import private_scope, publish, scope_holder_ids
from core.models import Event, ServiceAccount
from orchestrator.models import Interaction
from orchestrator.services.interactions import interaction_request_approval
from tests.assistant.factories import SKILL_SPEC, make_tested_draft
from tests.orchestrator import testcaps  # noqa: F401  (registers the otest.* capabilities)
from tests.orchestrator.conftest import build_plan, start
from tests.socket_frames import frames_by_user

pytestmark = pytest.mark.django_db(transaction=True)
GATED = {"capability": "otest.release", "inputs": {"label": "open valve V-7 on P-02"}}
READ = {"capability": "otest.read_value", "inputs": {"key": "k"}}


@pytest.fixture
def people(make_user) -> dict[str, Any]:
    return {
        "owner": make_user("oscar", OPERATOR),
        "approver": make_user("april", APPROVER, OPERATOR),
        "other": make_user("otto", OPERATOR),
    }


def _of_type(frames: list[dict], event_type: str) -> list[dict]:
    return [f for f in frames if f["type"] == event_type]


def _last_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


# --- interaction_needed --------------------------------------------------------------------------


async def test_a_gated_ask_reaches_its_owner_and_approvers_live_never_another_operator(people):
    seen = await frames_by_user(people, lambda: start(build_plan(people["owner"], [GATED])), after=None)
    owner, approver, other = (_of_type(seen[n], "interaction_needed") for n in ("owner", "approver", "other"))
    assert len(owner) == 1 and len(approver) == 1 and other == []
    assert approver[0]["question"] == owner[0]["question"] and "V-7" in approver[0]["question"]
    assert approver[0]["interaction_id"] == owner[0]["interaction_id"]
    assert (owner[0]["owner_id"], approver[0]["owner_id"]) == (people["owner"].pk, people["approver"].pk)


async def test_a_gated_ask_is_replayed_to_its_owner_and_approvers_never_another_operator(people):
    first = await sync_to_async(_last_id)()
    await sync_to_async(lambda: start(build_plan(people["owner"], [GATED])))()
    seen = await frames_by_user(people, None, after=first)
    assert [len(_of_type(seen[n], "interaction_needed")) for n in ("owner", "approver", "other")] == [1, 1, 0]


def _ask_audience(interaction_id: int) -> list[int]:
    rows = Event.objects.filter(type="interaction_needed", payload__interaction_id=interaction_id).order_by("id")
    return [row.payload["owner_id"] for row in rows]


def test_a_non_gated_ask_is_the_owners_alone_an_approver_cannot_decide_it(people):
    plan = start(build_plan(people["owner"], [READ], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    assert ask.required_scope == ""
    assert _ask_audience(ask.pk) == [people["owner"].pk]


def test_a_plan_choice_names_plant_details_to_its_owner_alone(client, people):
    from tests.workorders import factories as f

    f.make_cell("P-01"), f.make_cell("P-02")
    client.force_login(people["owner"])
    body = client.post(
        "/api/v1/aria/plans", {"goal": "Show the vibration of the pump"}, content_type="application/json"
    )
    (ask,) = body.json()["interactions"]
    assert ask["kind"] == "choice"
    assert _ask_audience(ask["id"]) == [people["owner"].pk]


def test_an_approval_request_made_in_someone_elses_turn_still_reaches_the_deciders(people, make_user):
    # Given a gated ask, and an approval request made while a coordinator turn of the owner runs
    plan = start(build_plan(people["owner"], [GATED]))
    ask = Interaction.objects.get(plan=plan)
    before = _last_id()
    with private_scope(people["owner"].pk):
        interaction_request_approval(interaction=ask, actor=people["owner"], note="please")
    # Then the re-announcement is the owner's and the approver's, not only the turn's user's
    rows = Event.objects.filter(type="interaction_needed", id__gt=before).order_by("id")
    assert [r.payload["owner_id"] for r in rows] == [people["owner"].pk, people["approver"].pk]


def test_the_approvers_of_an_ask_are_active_humans_holding_the_scope_never_its_owner(people, make_user):
    admin = make_user("adam", ADMIN)
    make_user("gone", APPROVER, is_active=False)
    robot = make_user("reviewer-bot", APPROVER)
    ServiceAccount.objects.create(user=robot, role=ServiceAccount.Role.REVIEWER)
    owning_approver = people["approver"]
    assert scope_holder_ids(APPROVER) == [owning_approver.pk, admin.pk]
    assert scope_holder_ids(APPROVER, besides=owning_approver.pk) == [admin.pk]
    assert scope_holder_ids("") == [] and scope_holder_ids("root") == []
    # an approver's own gated plan: one copy for them (as owner), one for the admin; never the robot
    plan = start(build_plan(owning_approver, [GATED]))
    assert _ask_audience(Interaction.objects.get(plan=plan).pk) == [owning_approver.pk, admin.pk]


# --- draft_updated -------------------------------------------------------------------------------


def _draft_events(draft_id: int, user_id: int) -> list[str]:
    rows = Event.objects.filter(type="draft_updated", payload__draft_id=draft_id, payload__owner_id=user_id)
    return [row.payload["status"] for row in rows.order_by("id")]


def test_a_draft_reaches_the_approvers_only_as_it_enters_or_leaves_their_queue(people):
    draft = make_tested_draft(people["owner"], spec=SKILL_SPEC, type="skill", name="pure-tools")
    draft_approve(draft=draft, actor=people["approver"])
    owner, approver, other = (people[n].pk for n in ("owner", "approver", "other"))
    assert _draft_events(draft.pk, owner) == ["draft", "validating", "validated", "testing", "tested", "approved"]
    assert _draft_events(draft.pk, approver) == ["tested", "approved"]
    assert _draft_events(draft.pk, other) == []
    assert not Event.objects.filter(type="draft_updated", payload__owner_id__isnull=True).exists()


async def test_a_draft_change_reaches_its_author_and_approvers_live_never_another_operator(people):
    draft = await sync_to_async(make_tested_draft)(people["owner"], spec=SKILL_SPEC, type="skill", name="pure")
    seen = await frames_by_user(people, lambda: draft_approve(draft=draft, actor=people["approver"]), after=None)
    statuses = {n: [f["status"] for f in _of_type(seen[n], "draft_updated")] for n in people}
    assert statuses == {"owner": [DraftStatus.APPROVED], "approver": [DraftStatus.APPROVED], "other": []}


async def test_a_new_draft_is_replayed_to_its_author_alone(people):
    first = await sync_to_async(_last_id)()
    await sync_to_async(draft_create)(owner=people["owner"], type="skill", name="secret-pump-fix", spec=SKILL_SPEC)
    seen = await frames_by_user(people, None, after=first)
    names = {n: [f["name"] for f in _of_type(seen[n], "draft_updated")] for n in people}
    assert names == {"owner": ["secret-pump-fix"], "approver": [], "other": []}


# --- the private scope itself ---------------------------------------------------------------------


def test_a_scope_of_several_users_writes_one_copy_each_and_nests(people):
    owner, approver = people["owner"].pk, people["approver"].pk
    with private_scope(owner, None, approver, owner):
        first = publish("work_order_ready", {"work_order_id": 1})
        with private_scope(approver):
            inner = publish("work_order_ready", {"work_order_id": 2})
        with private_scope(None):
            kept = publish("work_order_ready", {"work_order_id": 3})
    public = publish("work_order_ready", {"work_order_id": 4})
    by_order = {
        n: sorted(e.payload["owner_id"] for e in Event.objects.filter(payload__work_order_id=n)) for n in (1, 2, 3)
    }
    assert first.payload["owner_id"] == owner
    assert by_order == {1: sorted([owner, approver]), 2: [approver], 3: sorted([owner, approver])}
    assert "owner_id" not in public.payload and inner.payload["owner_id"] == approver and kept.pk


# --- interaction_closed ----------------------------------------------------------------------------


def _closed_audience(interaction_id: int) -> list[tuple[int, str]]:
    rows = Event.objects.filter(type="interaction_closed", payload__interaction_id=interaction_id).order_by("id")
    return [(row.payload["owner_id"], row.payload["because"]) for row in rows]


def _gated_ask(people: dict[str, Any]) -> Interaction:
    plan = start(build_plan(people["owner"], [GATED]))
    return Interaction.objects.get(plan=plan)


def test_an_answered_gated_ask_leaves_the_lists_of_its_owner_and_approvers_alone(people):
    from orchestrator.services.interactions import interaction_answer

    ask = _gated_ask(people)
    assert _closed_audience(ask.pk) == []
    interaction_answer(interaction=ask, actor=people["approver"], decision="approve")
    assert _closed_audience(ask.pk) == [(people["owner"].pk, "answered"), (people["approver"].pk, "answered")]


def test_a_withdrawn_ask_and_a_finished_plans_ask_are_announced_to_their_deciders(people):
    from orchestrator.services.plans import plan_cancel
    from orchestrator.services.step_moves import step_skip

    withdrawn = _gated_ask(people)
    step_skip(step=withdrawn.step, actor=people["owner"], reason="not today")
    assert _closed_audience(withdrawn.pk) == [(people["owner"].pk, "withdrawn"), (people["approver"].pk, "withdrawn")]

    left_open = _gated_ask(people)
    plan_cancel(plan=left_open.plan, actor=people["owner"])
    assert _closed_audience(left_open.pk) == [
        (people["owner"].pk, "plan_finished"),
        (people["approver"].pk, "plan_finished"),
    ]


async def test_an_approvers_socket_hears_the_ask_close_another_operators_does_not(people):
    from orchestrator.services.interactions import interaction_answer

    ask = await sync_to_async(_gated_ask)(people)
    decider = await sync_to_async(make_second_approver)(people)

    def decide() -> None:
        interaction_answer(interaction=ask, actor=decider, decision="reject")

    seen = await frames_by_user(people, decide, after=None)
    closed = {name: _of_type(seen[name], "interaction_closed") for name in ("owner", "approver", "other")}
    assert [len(closed[n]) for n in ("owner", "approver", "other")] == [1, 1, 0]
    assert closed["approver"][0]["interaction_id"] == ask.pk and closed["approver"][0]["because"] == "answered"


def make_second_approver(people: dict[str, Any]):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("amos")
    user.groups.add(Group.objects.get_or_create(name=APPROVER)[0])
    return user
