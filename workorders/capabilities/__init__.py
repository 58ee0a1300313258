"""What workorders offers agents, plans, the coordinator and MCP (registered on import)."""

from workorders.capabilities import agents, diagnosis, intake, maintenance, plant, render, repair, shift  # noqa: F401
