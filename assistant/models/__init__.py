"""The assistant's tables: sessions and their messages, runs and attachments; skills; drafts and
their reviews; published artifacts (prompt versions + aliases, tools, skills, workflows)."""

from assistant.models.config import RuntimeConfig
from assistant.models.drafts import Draft, Review
from assistant.models.operations import Operation
from assistant.models.publishing import PromptAlias, PromptVersion, PublishedArtifact
from assistant.models.sessions import Attachment, Message, Run, Session
from assistant.models.skills import Skill
from assistant.models.tool_calls import PendingToolCall

__all__ = [
    "Attachment",
    "Draft",
    "Message",
    "Operation",
    "PendingToolCall",
    "PromptAlias",
    "PromptVersion",
    "PublishedArtifact",
    "Review",
    "Run",
    "RuntimeConfig",
    "Session",
    "Skill",
]
