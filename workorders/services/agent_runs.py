"""Run one agent on a work order and fall back when it fails: the one way investigate and generate
run their agents.

The agent runs outside any transaction, in a turn of its own, as the system user. Its validated
finish-tool output goes to `on_output`; anything else (no finish tool, a turn limit, an engine
error, or a crash while building the prompt — the loop itself never raises) goes to `on_failure`
with the finish reason and the error. With `defer_end`, the agent's `agent_end` is published after
what the outcome wrote (the bus contract: `rca_ready` before the Investigator's `agent_end`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from core.agents.engines import Engine
from core.agents.loop import AgentSpec, run_agent
from core.capabilities import CapabilityContext
from core.events import turn_scope
from workorders.models import WorkOrder
from workorders.services.system_user import system_user

logger = logging.getLogger(__name__)
T = TypeVar("T")


def work_order_agent_run(
    *,
    work_order: WorkOrder,
    spec: Callable[[WorkOrder], AgentSpec],
    task_message: Callable[[WorkOrder], str],
    on_output: Callable[[dict], T],
    on_failure: Callable[[str, str], T],
    engine: Engine | None = None,
    defer_end: bool = False,
) -> T:
    """`on_output(output)` when the agent submitted its finish tool, else `on_failure(reason, error)`."""
    result = None
    with turn_scope() as turn_id:
        try:
            result = run_agent(
                spec(work_order),
                messages=task_message(work_order),
                ctx=CapabilityContext(user=system_user(), turn_id=turn_id),
                engine=engine,
                subject=("work_order", work_order.pk),
                defer_end=defer_end,
            )
            output, reason, error = result.output, result.finish_reason, result.run.error or ""
        except Exception as exc:  # the loop never raises; building the prompt still might
            logger.exception("Agent run on work order %s crashed", work_order.pk)
            output, reason, error = None, "error", f"{type(exc).__name__}: {exc}"
        try:
            if output is not None:
                return on_output(output)
            logger.warning("Agent run on work order %s ended without output: %s %s", work_order.pk, reason, error)
            return on_failure(reason, error)
        finally:
            if result is not None and defer_end:
                result.publish_end()
