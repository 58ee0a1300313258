"""`interaction_closed`: an ask no longer waits on its deciders — answered, withdrawn with its
step, or its plan finished. The same people get it as got its `interaction_needed` (the plan's
owner and, for a gated step, the holders of its scope), each a private copy, so their "needs me"
badge and list drop it live. Before plan events were private, every user's `plan_updated` told
them; now an approver sees no plan events of another owner's plan."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from core.events import private_scope, publish, scope_holder_ids
from orchestrator.models import Interaction

ClosedBecause = Literal["answered", "withdrawn", "plan_finished"]


def asks_closed(asks: Iterable[Interaction], *, owner_id: int, because: ClosedBecause) -> None:
    """Publish `interaction_closed` for each of one plan's asks (in the caller's transaction)."""
    holders: dict[str, list[int]] = {}
    for ask in asks:
        scope = ask.required_scope
        if scope not in holders:
            holders[scope] = scope_holder_ids(scope, besides=owner_id)
        with private_scope(owner_id, *holders[scope]):
            publish("interaction_closed", {"plan_id": ask.plan_id, "interaction_id": ask.pk, "because": because})
