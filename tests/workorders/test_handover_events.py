"""A handover draft is its author's until signed (another operator's GET is a 404), and so is its
`handover_updated`: `drafted` and `edited` go to the outgoing operator and the admins (who may read
the draft) only, live and on `?after=` replay, as does the drafting run's own agent and tool traffic.
Before, every socket got `{"action": "drafted", "outgoing": "olga", ...}`: another operator learnt
that a draft existed, whose it was and for which shift. Signed and acknowledged stay public."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async

from core.access import ADMIN, OPERATOR
from core.models import Event
from tests.socket_frames import frames_by_user
from workorders.services.handover import handover_draft, handover_edit, handover_sign

pytestmark = pytest.mark.django_db(transaction=True)
AGENT_FRAMES = {"agent_start", "agent_end", "tool_call_started", "tool_call_completed", "thinking_delta"}


@pytest.fixture
def people(operator, make_user) -> dict[str, Any]:
    return {"author": operator, "admin": make_user("adam", ADMIN), "other": make_user("otto", OPERATOR)}


def _handover_actions(frames: list[dict]) -> list[str]:
    return [f["action"] for f in frames if f.get("type") == "handover_updated"]


def _last_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


def _draft_and_edit(author) -> int:
    handover = handover_draft(actor=author)
    handover_edit(handover=handover, actor=author, report="State of the plant\nAll quiet.\n")
    return handover.pk


async def test_another_operators_socket_never_hears_of_a_draft_live_or_replayed(people):
    before = await sync_to_async(_last_id)()
    author = people["author"]

    live = await frames_by_user(people, lambda: _draft_and_edit(author), after=None)

    assert _handover_actions(live["other"]) == []
    assert not [f for f in live["other"] if f.get("type") in AGENT_FRAMES]  # nor the drafting run
    assert _handover_actions(live["author"]) == ["drafted", "edited"]
    assert _handover_actions(live["admin"]) == ["drafted", "edited"]
    assert {f["agent"] for f in live["author"] if f.get("type") == "agent_start"} == {"shift_handover"}

    replayed = await frames_by_user(people, None, after=before)
    assert _handover_actions(replayed["other"]) == []
    assert not [f for f in replayed["other"] if f.get("type") in AGENT_FRAMES]
    assert _handover_actions(replayed["author"]) == ["drafted", "edited"]


def test_the_draft_events_are_stored_as_private_copies_and_the_signed_one_is_public(people):
    author, admin, other = people["author"], people["admin"], people["other"]
    handover = handover_draft(actor=author)
    handover_edit(handover=handover, actor=author, report="All quiet.")
    handover_sign(handover=handover, actor=author)

    rows = Event.objects.filter(type="handover_updated", payload__handover_id=handover.pk).order_by("id")
    copies = [(row.payload["action"], row.payload.get("owner_id")) for row in rows]
    assert copies == [
        ("drafted", author.pk),
        ("drafted", admin.pk),
        ("edited", author.pk),
        ("edited", admin.pk),
        ("signed", None),  # once signed, the report is everyone's to read
    ]
    assert not Event.objects.filter(payload__owner_id=other.pk).exists()
    run_events = Event.objects.filter(type__in=AGENT_FRAMES, turn_id=handover.agent_run.turn_id)
    assert run_events.exists() and {e.payload.get("owner_id") for e in run_events} == {author.pk}
