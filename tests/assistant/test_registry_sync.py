"""A tool published in one process is callable in another running process without a restart: each
dispatch checks the published-artifacts stamp (core.capabilities.refresh_registry) and the
assistant's sync registers what is new and drops what is retired."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.sandbox import isolation_status

ROOT = Path(__file__).resolve().parents[2]

SETUP = """
from django.contrib.auth.models import Group, User
for name, scope in [("olga", "operator"), ("april", "approver"), ("pat", "approver")]:
    user = User.objects.create_user(username=name, password="pw-" + name)
    user.groups.add(Group.objects.get_or_create(name=scope)[0])
"""

# the second process: started before the publication, asked over stdin after it
CALLER = """
import json, sys
from django.contrib.auth.models import User
from core.capabilities import CapabilityContext, dispatch
user = User.objects.get(username="olga")
for line in sys.stdin:
    result = dispatch("double", {"x": 21}, ctx=CapabilityContext(user=user))
    print("RESULT " + json.dumps({"error": result.is_error, "content": result.content, "message": result.message}),
          flush=True)
"""

PUBLISH = """
from django.contrib.auth.models import User
from assistant.services.drafts import draft_approve, draft_create, draft_test, draft_validate
from assistant.services.publish import draft_publish
from tests.assistant.factories import TOOL_SPEC
olga, april, pat = (User.objects.get(username=n) for n in ("olga", "april", "pat"))
draft = draft_create(owner=olga, type="tool", name="double", spec=TOOL_SPEC)
draft = draft_test(draft=draft_validate(draft=draft, actor=olga), actor=olga)
draft = draft_publish(draft=draft_approve(draft=draft, actor=april), actor=pat)
print("PUBLISHED", draft.status)
"""


def _env(var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "aria_project.settings",
            "ARIA_VAR_DIR": str(var),
            "ARIA_ENV": "development",
            "ARIA_REGISTRY_REFRESH_SECONDS": "0",  # check the stamp on every dispatch
        }
    )
    return env


def _shell(env: dict[str, str], code: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _ask(caller: subprocess.Popen) -> dict:
    caller.stdin.write("call\n")
    caller.stdin.flush()
    while True:
        line = caller.stdout.readline()
        assert line, "the second process ended"
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])


def test_a_tool_published_in_one_process_is_callable_in_another_without_restart(tmp_path: Path) -> None:
    if not isolation_status().available and os.environ.get("ARIA_REQUIRE_INTEGRATION") != "1":
        pytest.skip("sandbox unavailable: published tools run in it")
    env = _env(tmp_path / "var")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    _shell(env, SETUP)
    caller = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", CALLER],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        before = _ask(caller)
        assert before["error"] and "Unknown capability 'double'" in before["message"]

        assert "PUBLISHED published" in _shell(env, PUBLISH)  # another process publishes

        after = _ask(caller)  # the same, still running, second process
        assert not after["error"], after["message"]
        assert after["content"] == {"doubled": 42}
    finally:
        caller.stdin.close()
        caller.wait(timeout=60)
