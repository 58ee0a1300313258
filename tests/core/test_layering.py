"""The layering contracts in .importlinter hold (CI's lint step runs the same `lint-imports`), so
`dev.py test` catches an upward or cross-app import too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("aria_project", "core", "sentinel", "workorders", "assistant", "orchestrator")


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    return subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120, env={"PATH": ""}
    )


def test_import_contracts_are_kept() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("core", "sentinel"),  # the kernel names an app
        ("core", "aria_project"),  # the kernel reaches the composition root
        ("sentinel", "workorders"),  # the one allowed direction, reversed
        ("assistant", "orchestrator"),  # two apps that must not know each other
        ("workorders", "aria_project"),
    ],
)
def test_a_forbidden_import_breaks_the_build(tmp_path: Path, importer: str, imported: str) -> None:
    # Given a tree of the same packages under the same contracts
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    # When one module imports across a forbidden line
    (tmp_path / importer / "leak.py").write_text(f"import {imported}\n")
    result = _lint_imports(tmp_path)
    # Then lint-imports fails and names the import
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{importer}.leak -> {imported}" in result.stdout


def test_workorders_may_import_sentinel(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "workorders" / "alarms.py").write_text("import sentinel\nimport core\n")
    (tmp_path / "sentinel" / "kernel.py").write_text("import core\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
