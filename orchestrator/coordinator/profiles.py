"""Specialist profiles the coordinator may delegate to: what each does, the one step it runs, its
tool allowlist and its model (use case). The coordinator sees this table in its context packet;
the validator and `orchestrator.run_specialist` enforce it.

Two kinds of profile:
- a capability profile runs another app's agent through that app's capability (the investigator
  through `workorders.start_investigation`, the KB builder through `workorders.ask_kb_builder`);
  that agent's allowlist and model are its owning app's;
- an agent profile runs through a specialist runner: the core agent loop with exactly this
  profile's tools and use case (the loop refuses any other tool; the run records its model). A
  profile whose allowlist holds a mutate-tier tool WRITES, so it runs through
  `orchestrator.run_writing_specialist` (tier mutate: the plan gate asks before it may write under
  ask_mutations); the others through `orchestrator.run_specialist` (safe). `runner_for()` decides
  from the allowlist's tiers in the registry, not from a flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.capabilities import Tier, registry

RUN_SPECIALIST = "orchestrator.run_specialist"
RUN_WRITING_SPECIALIST = "orchestrator.run_writing_specialist"


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    covers: str  # the kind of work: investigation | research | repair_order | authoring | review
    size: str  # small | large (a smaller agent covering the same work is a cheaper substitute)
    use_case: str  # the model it runs on: core.agents.engines.model_for(use_case)
    capability: str = ""  # a capability profile's own capability; empty for agent profiles
    agent: str = ""  # the agent spec name a specialist runner runs (its fake policy offline)
    tools: tuple[str, ...] = ()
    finish: str = ""
    roles: tuple[str, ...] = field(default_factory=tuple)  # how people refer to it
    system: str = ""

    def packet(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "covers": self.covers,
            "size": self.size,
            "model_use_case": self.use_case,
            "tools": list(self.tools) or [self.capability],
            "runner": runner_for(self),
            "writes": writes(self),
            "roles": list(self.roles),
        }


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "investigator",
            "root-cause analysis of a detected work order (the workorders Investigator, async)",
            covers="investigation",
            size="large",
            use_case="reasoning",
            capability="workorders.start_investigation",
            roles=("investigator", "research", "root cause"),
        ),
        Profile(
            "investigator_lite",
            "a quick root-cause pass on a smaller model: trends, KB and failure history only",
            covers="investigation",
            size="small",
            use_case="extraction",
            agent="investigator",
            tools=(
                "workorders.get_signal_trends",
                "workorders.get_equipment_kb",
                "workorders.get_failure_history",
                "workorders.render_signal_chart",
                "workorders.render_pattern_match",
            ),
            finish="submit_rca",
            roles=("investigator", "research"),
        ),
        Profile(
            "kb_builder",
            "equipment knowledge questions about a cell (workorders KB agent)",
            covers="research",
            size="small",
            use_case="chat",
            capability="workorders.ask_kb_builder",
            roles=("kb", "knowledge", "research"),
        ),
        Profile(
            "work_order_generator",
            "writes a work order's repair order (title, actions, parts, skills, window) from its RCA, KB and shifts",
            covers="repair_order",
            size="large",
            use_case="reasoning",
            agent="work_order_writer",
            tools=(
                "workorders.get_work_order",
                "workorders.get_equipment_kb",
                "workorders.get_shift_assignments",
                "workorders.update_work_order",
            ),
            finish="submit_work_order",
            roles=("generator", "repair order", "work order writer"),
        ),
        Profile(
            "authoring_assistant",
            "creates a tool/skill/prompt/workflow draft owned by you (never validated, approved or published here)",
            covers="authoring",
            size="large",
            use_case="chat",
            agent="draft_author",
            tools=("assistant.create_draft",),
            finish="submit_draft",
            roles=("author", "authoring", "build", "draft a ", "draft an "),
        ),
        Profile(
            "reviewer",
            "checks the results of the earlier steps of the same plan and returns a verdict with notes",
            covers="review",
            size="small",
            use_case="extraction",
            agent="plan_reviewer",
            tools=("orchestrator.get_plan", "workorders.get_work_order"),
            finish="submit_review",
            roles=("reviewer", "review", "check"),
        ),
    )
}


def writes(profile: Profile) -> bool:
    """Does the profile's allowlist hold a tool of tier mutate or above (per the registry)?"""
    return any((cap := registry.get(name)) is not None and cap.tier >= Tier.MUTATE for name in profile.tools)


def runner_for(profile: Profile) -> str:
    """The capability a plan step runs the profile through."""
    if profile.capability:
        return profile.capability
    return RUN_WRITING_SPECIALIST if writes(profile) else RUN_SPECIALIST
