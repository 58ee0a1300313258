"""An ask's events, to its deciders alone: the plan's owner and, for a gated step, the holders of
its scope — each a private copy (the question may name plant details).

- `interaction_needed`: the ask opened, or its approval was requested again.
- `interaction_closed`: the ask no longer waits — answered, withdrawn with its step, or its plan
  finished — so the deciders' "needs me" badge and list drop it live. Before plan events were
  private, every user's `plan_updated` told them; now an approver sees no plan events of another
  owner's plan."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from core.events import private_scope, publish, scope_holder_ids
from orchestrator.models import Interaction

ClosedBecause = Literal["answered", "withdrawn", "plan_finished"]


def ask_deciders(owner_id: int, required_scope: str) -> list[int]:
    """The owner, then every active holder of `required_scope` other than the owner (none for "")."""
    return [owner_id, *scope_holder_ids(required_scope, besides=owner_id)]


def ask_needed(ask: Interaction, *, owner_id: int) -> None:
    """Publish `interaction_needed` for `ask` to its deciders (in the caller's transaction)."""
    with private_scope(*ask_deciders(owner_id, ask.required_scope)):
        publish(
            "interaction_needed",
            {
                "plan_id": ask.plan_id,
                "interaction_id": ask.pk,
                "kind": ask.kind,
                "question": ask.question,
                "required_scope": ask.required_scope,
            },
        )


def asks_closed(asks: Iterable[Interaction], *, owner_id: int, because: ClosedBecause) -> None:
    """Publish `interaction_closed` for each of one plan's asks (in the caller's transaction)."""
    deciders: dict[str, list[int]] = {}
    for ask in asks:
        scope = ask.required_scope
        if scope not in deciders:
            deciders[scope] = ask_deciders(owner_id, scope)
        with private_scope(*deciders[scope]):
            publish("interaction_closed", {"plan_id": ask.plan_id, "interaction_id": ask.pk, "because": because})
