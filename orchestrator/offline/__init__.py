"""OFFLINE STAND-INS for the orchestrator's agents: the fake engine's policies (no model involved).

Imported only by the fake engine, on first use (`OrchestratorConfig.offline_policies`); no other
orchestrator module imports this package. The planner, the specialist profiles (writers, plan
reviewer) and the coordinator: its gateway decides from a `Reading` of the message (`reading.py`)
plus read-tool results; tests hand it readings directly, the offline demo reads the words with
`keyword_reading` first. The wording rules the validator enforces stay in `coordinator/wording.py`.
"""

from orchestrator.offline import gateway, planner, specialists

__all__ = ["gateway", "planner", "specialists"]
