"""`manage.py check --database default` names rows stored before their write-time checks existed:
work-order plan lists and KB sections of the wrong shape, skills and artifacts without a slug name.
Without --database the checks stay silent (they read tables)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from assistant.models import PublishedArtifact, Skill
from tests.workorders import factories as f
from workorders.models import EquipmentKB, WorkOrder

pytestmark = pytest.mark.django_db


def _check(*args: str) -> str:
    out = StringIO()
    call_command("check", *args, stdout=out, stderr=out)
    return out.getvalue()


def test_clean_rows_raise_no_warning():
    cell = f.make_cell()
    f.make_kb(cell)
    f.make_work_order(cell, required_parts=[{"ref": "BRG-6205", "qty": 2}])
    Skill.objects.create(name="bearing-notes", instructions="x")
    output = _check("--database", "default")
    assert "W001" not in output and "W002" not in output


def test_rows_stored_before_the_checks_are_named_with_their_field():
    cell = f.make_cell()
    kb = f.make_kb(cell)
    good = f.make_work_order(cell)
    # Written past the services, as rows stored before the checks were.
    bad = f.make_work_order(cell)
    WorkOrder.objects.filter(pk=bad.pk).update(required_parts="str")
    EquipmentKB.objects.filter(pk=kb.pk).update(data={"failure_modes": "garbage"})
    Skill.objects.create(name="<img src=x onerror=alert(1)>", instructions="x")
    PublishedArtifact.objects.create(type="skill", name="../../etc", version=1)
    PublishedArtifact.objects.create(type="skill", name="../../old", version=1, active=False)  # retired

    output = _check("--database", "default")
    assert f"Work order {bad.pk}: required_parts" in output
    assert f"Work order {good.pk}:" not in output
    assert f"Equipment KB {kb.pk} (cell {cell.pk}): data.failure_modes" in output
    assert "Skill" in output and "<img src=x onerror=alert(1)>" in output
    assert "'../../etc'" in output and "../../old" not in output
    assert "workorders.W001" in output and "workorders.W002" in output and "assistant.W001" in output
    assert "W001" not in _check()  # without --database: no table is read


def test_every_malformed_field_of_a_work_order_is_named_in_its_one_warning():
    cell = f.make_cell()
    bad = f.make_work_order(cell)
    WorkOrder.objects.filter(pk=bad.pk).update(
        recommended_actions="str", required_parts=[{"qty": 1}], required_skills=[1]
    )
    output = _check("--database", "default")
    (line,) = [x for x in output.splitlines() if f"Work order {bad.pk}:" in x]
    assert "recommended_actions" in line and "required_parts.0" in line and "required_skills.0" in line
    assert output.count("workorders.W001") == 1


def test_warnings_do_not_fail_the_check_but_are_capped(monkeypatch):
    cell = f.make_cell()
    for _ in range(23):
        WorkOrder.objects.filter(pk=f.make_work_order(cell).pk).update(required_skills=[1])
    output = _check("--database", "default")  # warnings only: no SystemCheckError
    assert output.count("workorders.W001") == 21 and "3 more work orders with a malformed field." in output
    with pytest.raises(SystemCheckError):
        call_command("check", "--database", "default", "--fail-level", "WARNING", stdout=StringIO(), stderr=StringIO())


def test_migrate_on_a_fresh_database_is_not_stopped_by_the_checks(tmp_path):
    """`migrate` runs the database checks before it migrates: on a fresh database their tables do
    not exist yet (the checks first broke `manage.py migrate` with "no such table")."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    checked = subprocess.run(
        [sys.executable, "manage.py", "check", "--database", "default"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0 and "no issues" in checked.stdout, checked.stdout + checked.stderr[-2000:]
