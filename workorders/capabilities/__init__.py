"""What workorders offers agents, plans, the coordinator and MCP (registered on import)."""

from workorders.capabilities import agents, diagnosis, maintenance, plant, render, repair, shift  # noqa: F401
