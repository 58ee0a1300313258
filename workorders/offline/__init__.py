"""OFFLINE STAND-INS for the maintenance agents: the fake engine's policies (no model involved).

Imported only by the fake engine, on first use (`WorkordersConfig.offline_policies`); no other
workorders module imports this package. Each policy decides from the request and the tool results
it was given, through the same tools a model would call.
"""

from workorders.offline import generator, handover, investigator, kb

__all__ = ["generator", "handover", "investigator", "kb"]
