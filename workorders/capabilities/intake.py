"""Raising a work order by hand, for agents, plans, the coordinator and MCP clients.

The same service as `POST /api/v1/workorders` (`work_order_raise`): the same checks (the cell must
exist, else an error naming `cell`; title, description and priority bounds), the operator scope,
the caller as `raised_by` — the context's user, never a value from the input (an input naming
`raised_by`, `status` or anything else it does not take is refused) — and the same record (history
row, audit `work_order.create`, `work_order_updated`). Tier `mutate`, so it gets what every
mutating capability gets: the plan gate asks before it runs under `ask_mutations`, the build-mode
chat holds it for the user's Confirm, the operator Q&A chat never has it, MCP lists it to
operators only.

A plan step's attempt key (`ctx.extra["idempotency_key"]`, kept when a stale step is taken over)
is the raise's Idempotency-Key: a re-driven step answers the order its first run raised
(`replayed: true`) instead of raising a second one. Any other caller (an MCP client, which may
retry a call whose answer it lost) may send its own `request_key`, the route's Idempotency-Key by
another name: the same key and values answer the first order, the key with other values is refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from core.idempotency import IDEMPOTENCY_KEY_MAX
from core.json_types import BodyRowId, not_blank_text
from workorders import selectors
from workorders.schemas import PriorityName
from workorders.services import work_order_raise
from workorders.services.edits import MAX_DESCRIPTION_CHARS
from workorders.services.manual_intake import MAX_TITLE_CHARS


class RaiseWorkOrderInput(BaseModel):
    # Who raises it and the state it starts in are not the caller's to say: {"raised_by": …} is refused.
    model_config = ConfigDict(extra="forbid")

    cell_id: BodyRowId = Field(description="The cell (equipment) the problem was found on: its id (find_cells).")
    title: str = not_blank_text(MAX_TITLE_CHARS, description="What was found, e.g. 'Seal leak at P-02'.")
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    priority: PriorityName = "medium"
    request_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=IDEMPOTENCY_KEY_MAX,
        pattern=r"^[\x21-\x7e]+$",
        description=(
            "Optional, a key of your choosing (visible ASCII, no spaces): a retry with the same key and values "
            "answers the order the first call raised instead of raising another."
        ),
    )


@capability(
    "workorders.raise_work_order",
    description=(
        "Raise a work order by hand for a problem found in the field (a leak, a noise, a loose guard) on a cell. "
        "It starts open, records the caller as who raised it and queues no agent; it is then assigned, started "
        "and completed like any other. Only when the user asks for a new work order."
    ),
    input=RaiseWorkOrderInput,
    tier=Tier.MUTATE,
    scopes=(OPERATOR,),
)
def raise_work_order(ctx: CapabilityContext, params: RaiseWorkOrderInput) -> dict[str, Any]:
    key = ctx.extra.get("idempotency_key") or params.request_key  # a plan step's own key comes first
    wo, replayed = work_order_raise(
        cell=params.cell_id,
        title=params.title,
        description=params.description,
        priority=params.priority,
        actor=ctx.user,
        idempotency_key=str(key) if key else None,
    )
    data = selectors.work_order_as_dict(selectors.get_work_order(wo.pk), full=True)
    data["replayed"] = replayed
    said = "already raised" if replayed else "raised"
    data["summary"] = f"WO-{wo.pk} {said} on {wo.cell.tag} ({wo.priority}): {wo.title}"[:200]
    return data
