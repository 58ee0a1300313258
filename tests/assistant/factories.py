"""Draft specs and principals for the assistant tests."""

from __future__ import annotations

from assistant.choices import DraftStatus
from assistant.models import RuntimeConfig
from assistant.services.drafts import draft_create, draft_test, draft_validate
from core.access import APPROVER, OPERATOR
from core.models import ServiceAccount

TOOL_SPEC = {
    "description": "Double a number.",
    "entrypoint": "run",
    "source": "def run(params):\n    return {'doubled': params['x'] * 2}\n",
    "input_schema": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
    "tests": [{"name": "doubles", "input": {"x": 2}, "expect": {"doubled": 4}}],
}
PROMPT_SPEC = {
    "agent": "investigator",
    "text": "You are the plant's Investigator. Always check {{focus}} first. Finish by calling submit_rca.",
    "variables": ["focus"],
}
SKILL_SPEC = {"instructions": "When drafting tools, keep them pure.", "triggers": ["tool"], "runtime_mode": "auto"}


def tool_spec(source: str, **extra) -> dict:
    return {**TOOL_SPEC, "source": source, "tests": [{"input": {"x": 1}}], **extra}


def set_config(**data) -> None:
    RuntimeConfig.objects.update_or_create(pk=1, defaults={"data": data})


def service_user(make_user, username: str, role: str, *scopes: str):
    user = make_user(username, *scopes)
    ServiceAccount.objects.create(user=user, role=role)
    return user


def principals(make_user, *, reviewer_scopes=(APPROVER,), release=True):
    reviewer = service_user(make_user, "reviewer-bot", "reviewer", *reviewer_scopes)
    rel = service_user(make_user, "release-bot", "release", OPERATOR) if release else None
    return reviewer, rel


def make_tested_draft(owner, spec=TOOL_SPEC, type="tool", name="double"):
    draft = draft_create(owner=owner, type=type, name=name, spec=spec)
    draft = draft_validate(draft=draft, actor=owner)
    assert draft.status == DraftStatus.VALIDATED, draft.validation_report
    draft = draft_test(draft=draft, actor=owner)
    assert draft.status == DraftStatus.TESTED, draft.test_report
    return draft
