"""Offline stand-ins are set apart: each app declares its `offline/` package, nothing else imports it,
and the fake engine imports it the first time it needs a policy — never at start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.agents.engines.fake import load_offline_policies, offline_policy_modules

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["assistant.offline", "orchestrator.offline", "workorders.offline"]

PROBE = """
import json, sys
import django
django.setup()
loaded = lambda: sorted(m for m in sys.modules if m.split(".")[1:2] == ["offline"])
at_start = loaded()
from core.agents.engines import get_engine
from core.agents.types import EngineRequest
engine = get_engine("fake")
after_selecting = loaded()
engine.complete(EngineRequest(agent="planner", system="", messages=[{"role": "user", "content": "read the backlog"}],
                              tools=[], model="fake", use_case="reasoning"))
print(json.dumps({"start": at_start, "selected": after_selecting, "used": loaded()}))
"""


def test_every_app_with_agents_declares_its_offline_package():
    assert sorted(offline_policy_modules()) == PACKAGES


def test_the_stand_ins_are_imported_only_when_the_fake_engine_needs_a_policy():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "aria_project.settings_test", "ARIA_ENGINE": "fake"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    assert modules["start"] == [] and modules["selected"] == []  # django.setup() and get_engine load none
    assert set(PACKAGES) <= set(modules["used"])  # the first policy lookup loads every declared package


def test_every_agent_with_a_stand_in_is_registered_once_loaded():
    policies = load_offline_policies()
    expected = {
        "operator_qa", "authoring_assistant", "investigator", "work_order_generator", "kb_builder", "kb_qa",
        "shift_handover", "planner", "coordinator", "plan_reviewer", "work_order_writer", "draft_author",
    }  # fmt: skip
    assert expected <= set(policies)
    assert "draft_reviewer" not in policies  # the review service refuses an offline reviewer: no stand-in
