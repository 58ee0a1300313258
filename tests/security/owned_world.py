"""The id-taking routes of the one NinjaAPI, and a world of objects owned by one user to call them on.

`id_routes()` walks the API's own URL patterns (as tests/security/test_every_body_route.py does), so
a route left out of the OpenAPI schema is found too. `owned_world(owner)` creates one object of every
owner-scoped kind as `owner`, through the services where they exist, and returns the path (and body)
values that name them. `snapshot()` is every row of ARIA's own tables: a refused call changes none.
"""

from __future__ import annotations

import re
from typing import Any

from django.apps import apps
from django.contrib.auth.models import AbstractBaseUser
from ninja.operation import PathView

from aria_project.api import api

APPS = ("core", "sentinel", "workorders", "assistant", "orchestrator")
PARAM = re.compile(r"<(?:\w+:)?(\w+)>")
MISSING_INT = 987654
MISSING_STR = "nosuchname"


def _path_view(callback: Any) -> PathView | None:
    for cell in getattr(callback, "__closure__", None) or ():
        if isinstance(cell.cell_contents, PathView):
            return cell.cell_contents
    return None


def id_routes() -> list[tuple[str, str]]:
    """(method, template) of every operation whose path names something, e.g.
    ("POST", "/assistant/drafts/{draft_id}/approve"), in order, each once."""
    found: set[tuple[str, str]] = set()
    patterns, _, _ = api.urls
    for pattern in patterns:
        path_view = _path_view(pattern.callback)
        route = str(pattern.pattern)
        if path_view is None or not PARAM.search(route):
            continue
        template = "/" + PARAM.sub(r"{\1}", route).rstrip("/")
        for operation in path_view.operations:
            found.update((method, template) for method in operation.methods)
    return sorted(found, key=lambda r: (r[1], r[0]))


def params_of(template: str) -> list[str]:
    return re.findall(r"{(\w+)}", template)


def fill(template: str, values: dict[str, Any]) -> str:
    return "/api/v1" + re.sub(r"{(\w+)}", lambda m: str(values[m.group(1)]), template)


def missing_values(template: str) -> dict[str, Any]:
    """Values naming no row: what a caller gets for these is what "not there" looks like."""
    return {
        name: MISSING_STR if name in ("conversation", "name", "alias") else MISSING_INT for name in params_of(template)
    }


def snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every row of ARIA's own tables (audit records, events and agent runs included)."""
    rows = {}
    for model in apps.get_models():
        if model._meta.app_label in APPS and not model._meta.proxy:
            rows[model._meta.label] = list(model.objects.order_by("pk").values())
    return rows


def owned_world(owner: AbstractBaseUser) -> dict[str, Any]:
    """One object of every owner-scoped kind, owned by `owner`; the values naming them."""
    from assistant.choices import Mode
    from assistant.models import PendingToolCall, Run, Skill
    from assistant.services.attachments import attachment_add_text
    from assistant.services.drafts import draft_create
    from assistant.services.operations import operation_plan
    from assistant.services.sessions import session_create
    from orchestrator.coordinator.transcript import transcript_save
    from orchestrator.models import CoordinatorTurn, Interaction, Plan, PlanStep
    from tests.workorders.factories import make_cell
    from workorders.services.handover import handover_draft
    from workorders.services.logbook import logbook_entry_create

    session = session_create(owner=owner, title="owner's notes on P-02", mode=Mode.BUILD)
    attachment = attachment_add_text(session=session, name="notes.txt", text="P-02 seal weeps")
    draft = draft_create(
        owner=owner, type="skill", name="tidy", session=session,
        spec={"instructions": "Keep tools pure.", "triggers": ["tool"], "runtime_mode": "auto"},
    )  # fmt: skip
    run = Run.objects.create(session=session, engine="fake", mode=Mode.CHAT, input_summary="why did P-02 trip?")
    call = PendingToolCall.objects.create(
        session=session, run=run, capability="workorders.update_work_order", tool_name="update_work_order",
        tier="mutate", args={"work_order_id": 1, "priority": "high"},
    )  # fmt: skip
    operation = operation_plan(owner=owner, intent="create_skill", slots={"name": "tidy2"}, session=session)
    Skill.objects.get_or_create(name="pure-tools", defaults={"instructions": "Keep tools pure."})
    plan = Plan.objects.create(owner=owner, goal="check P-02 vibration", autonomy="ask_all", status="draft")
    step = PlanStep.objects.create(plan=plan, order=1, capability="workorders.get_work_orders", inputs={}, tier="read")
    interaction = Interaction.objects.create(plan=plan, step=step, kind="confirm", question="Run step 1?")
    turn = transcript_save(
        CoordinatorTurn(user=owner, conversation="owners-talk", message="what is open on P-02?", answer="Two.")
    )
    cell = make_cell("P-07")
    entry = logbook_entry_create(cell=cell, author=owner, text="Seal weeps at 40 C.")
    handover = handover_draft(actor=owner)
    return {
        "session_id": session.pk,
        "attachment_id": attachment.pk,
        "draft_id": draft.pk,
        "run_id": run.pk,
        "call_id": call.pk,
        "operation_id": operation.pk,
        "name": "pure-tools",
        "plan_id": plan.pk,
        "order": step.order,
        "interaction_id": interaction.pk,
        "turn_id": turn.pk,
        "conversation": turn.conversation,
        "entry_id": entry.pk,
        "handover_id": handover.pk,
        "cell_id": cell.pk,
    }


def plant_world(author: AbstractBaseUser) -> dict[str, Any]:
    """One object of every plant-wide kind a path names, made by (or at the request of) `author`."""
    from assistant.models import PromptVersion
    from tests.workorders.factories import make_alarm, make_cell, make_kb, make_signal, make_work_order
    from workorders.models import RcaEvaluation
    from workorders.services.logbook import AttachmentIn, logbook_entry_create

    cell = make_cell("P-09")
    make_kb(cell)
    signal = make_signal(cell)
    entry = logbook_entry_create(
        cell=cell, author=author, text="Seal weeps.", attachments=[AttachmentIn(name="r.txt", text="4.1 mm/s")]
    )
    evaluation = RcaEvaluation.objects.create(engine="fake", requested_by=author)
    prompt = PromptVersion.objects.create(name="investigator", version=1, text="Check it.", created_by=author)
    return {
        "alarm_id": make_alarm(signal).pk,
        "signal_id": signal.pk,
        "work_order_id": make_work_order(cell).pk,
        "cell_id": cell.pk,
        "attachment_id": entry.attachments.get().pk,
        "run_id": evaluation.pk,
        "name": prompt.name,
    }
