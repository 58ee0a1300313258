"""A running coordinator turn tells its owner where it is: `coordinator_turn_state` on the bus.

inspecting (context packet and read tools) → validating (the action plan) → executing (the
allowed actions) → answered | rejected | failed (recorded in the transcript). The event is private
to the turn's user (its `owner_id`: the bus delivers it to no other socket) and carries no text;
the answer is read from the owner-scoped turn routes.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from core.events import current_turn_id, publish
from orchestrator.models import CoordinatorTurn

TERMINAL = {
    CoordinatorTurn.Status.OK: "answered",
    CoordinatorTurn.Status.REJECTED: "rejected",
    CoordinatorTurn.Status.FAILED: "failed",
}


@dataclass(frozen=True)
class TurnProgress:
    user: AbstractBaseUser
    conversation: str
    offline: bool = False  # the answer comes from the offline demo engine

    def _publish(self, state: str, coordinator_turn_id: int | None = None) -> None:
        publish(
            "coordinator_turn_state",
            {
                "owner_id": self.user.pk,
                "turn_id": current_turn_id.get(),
                "conversation": self.conversation,
                "state": state,
                "coordinator_turn_id": coordinator_turn_id,
                "offline": self.offline,
            },
        )

    def inspecting(self) -> None:
        self._publish("inspecting")

    def validating(self) -> None:
        self._publish("validating")

    def executing(self) -> None:
        self._publish("executing")

    def recorded(self, turn: CoordinatorTurn) -> CoordinatorTurn:
        """The terminal state, once the turn is in the transcript."""
        self._publish(TERMINAL[CoordinatorTurn.Status(turn.status)], turn.pk)
        return turn
