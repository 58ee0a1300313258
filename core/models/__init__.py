"""The kernel's tables: access tokens, the event outbox, the audit chain, agent runs,
dispatch intents and work leases."""

from core.models.access import ApiToken, ServiceAccount
from core.models.agents import AgentRun, AgentStep
from core.models.audit import AuditChainHead, AuditRecord
from core.models.dispatch import DispatchIntent, WorkLease
from core.models.events import Event

__all__ = [
    "AgentRun",
    "AgentStep",
    "ApiToken",
    "AuditChainHead",
    "AuditRecord",
    "DispatchIntent",
    "Event",
    "ServiceAccount",
    "WorkLease",
]
