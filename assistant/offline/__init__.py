"""OFFLINE STAND-INS for the assistant's agents: the fake engine's policies (no model involved).

Imported only by the fake engine, on first use (`AssistantConfig.offline_policies`); no other
assistant module imports this package. The draft reviewer has no stand-in: the review service
refuses an offline reviewer and leaves the draft to a human approver.
"""

from assistant.offline import author, operator_qa

__all__ = ["author", "operator_qa"]
