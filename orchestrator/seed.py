"""Demo data: one draft plan for the demo operator, so the Plans page has something to approve."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from core.errors import DomainError
from orchestrator.models import Plan
from orchestrator.services.plans import plan_create

DEMO_GOAL = "What is on the work order backlog?"


def seed(stdout) -> None:
    owner = get_user_model().objects.filter(username="operator").first()
    if owner is None or Plan.objects.filter(owner=owner, goal=DEMO_GOAL).exists():
        stdout.write("orchestrator: demo plan already present (or no demo operator)\n")
        return
    try:
        plan = plan_create(owner=owner, goal=DEMO_GOAL, autonomy="ask_mutations")
    except DomainError as exc:  # e.g. workorders capabilities not installed
        stdout.write(f"orchestrator: no demo plan ({exc.message})\n")
        return
    stdout.write(f"orchestrator: draft plan {plan.pk} with {plan.steps.count()} step(s) created\n")
