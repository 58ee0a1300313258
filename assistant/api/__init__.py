"""The assistant's routes: /api/v1/assistant/… (authoring) and /api/v1/agent/chat (Q&A fallback)."""

from ninja import Router

from assistant.api import chat

PREFIX = "/"
router = Router(tags=["assistant"])
router.add_router("/agent", chat.router)


def _mount() -> None:
    from importlib import import_module  # importlib: optional per-concern route modules
    from importlib.util import find_spec

    authoring = Router(tags=["assistant"])
    for module in (
        "sessions",
        "attachments",
        "drafts",
        "prompts",
        "config",
        "tool_calls",
        "session_skills",
        "workbench",
        "session_workbench",
    ):
        if find_spec(f"assistant.api.{module}"):
            authoring.add_router("", import_module(f"assistant.api.{module}").router)
    router.add_router("/assistant", authoring)


_mount()
