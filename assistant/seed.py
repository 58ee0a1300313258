"""Demo data for the assistant (idempotent): a few skills, and the reviewer/release principals
named in the runtime config with the scopes their roles need (the policy stays `manual`)."""

from __future__ import annotations

from django.contrib.auth.models import Group

from assistant.models import RuntimeConfig, Skill
from core.access import APPROVER, OPERATOR
from core.models import ServiceAccount

SKILLS = [
    (
        "tool-authoring",
        "Writing sandboxed tools",
        "A tool is one pure Python function run(params) -> JSON. No network, no files outside the working "
        "directory, no environment. Declare an input_schema with required fields and add at least one test "
        "with an expected output.",
        ["tool", "function", "calculate", "convert"],
        "auto",
    ),
    (
        "prompt-authoring",
        "Writing agent prompts",
        "Prompts name the agent's job, the evidence to check first, and the finish tool. Use {{variables}} "
        "for anything filled at run time and declare every one of them.",
        ["prompt", "investigator", "generator", "instructions"],
        "auto",
    ),
    (
        "maintenance-domain",
        "Maintenance vocabulary",
        "Vibration zones per ISO 10816-3: <2.3 good, 2.3–4.5 acceptable, 4.5–7.1 alert, >7.1 trip. Work "
        "orders go detected → analyzed → open → in_progress → completed.",
        ["vibration", "pump", "bearing", "work", "alarm"],
        "auto",
    ),
]
PRINCIPALS = {"reviewer": (ServiceAccount.Role.REVIEWER, APPROVER), "release": (ServiceAccount.Role.RELEASE, OPERATOR)}


def seed(stdout) -> None:
    for name, description, instructions, triggers, mode in SKILLS:
        Skill.objects.get_or_create(
            name=name,
            defaults={
                "description": description,
                "instructions": instructions,
                "triggers": triggers,
                "runtime_mode": mode,
            },
        )
    configured = {}
    for role, (account_role, scope) in PRINCIPALS.items():
        account = ServiceAccount.objects.select_related("user").filter(role=account_role).order_by("pk").first()
        if account is None:
            continue
        account.user.groups.add(Group.objects.get_or_create(name=scope)[0])
        configured[f"{role}_username"] = account.user.get_username()
    row, _ = RuntimeConfig.objects.get_or_create(pk=1)
    missing = {k: v for k, v in configured.items() if not row.data.get(k)}
    if missing:
        row.data = {**row.data, **missing}
        row.save()
    stdout.write(
        f"assistant: {Skill.objects.count()} skill(s); principals {', '.join(configured.values()) or 'none'}\n"
    )
