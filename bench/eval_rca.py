"""Diagnosis quality of the offline Investigator through the whole pipeline (manage.py eval_rca).

    .venv/bin/python bench/eval_rca.py [--repeat 5] [--engine fake] [--keep-db]

Runs in its own SQLite database (a temporary directory, migrated first), so the demo database and
a live simulator are untouched. Plays the main set and the held-out set (other seeds, 1.6× noise)
with `--repeat` cases per scenario each, through ingest → alarm → work order → Investigator, and
prints one JSON object: both sets' scores and confusion matrices, the gap in points, and whether
the goals hold (main failure-mode accuracy ≥ 90 %, held-out within 10 points of it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOAL_MAIN = 0.90
GOAL_GAP_POINTS = 10.0


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def run_set(env: dict[str, str], engine: str, repeat: int, held_out: bool) -> dict[str, Any]:
    args = ["eval_rca", "--engine", engine, "--repeat", str(repeat), "--json-only"]
    data = json.loads(manage(env, *([*args, "--held-out"] if held_out else args)).strip().splitlines()[-1])
    wrong = [
        {k: r[k] for k in ("scenario", "variant", "seed", "predicted")}
        for r in data["results"]
        if not r["mode_correct"]
    ]
    keys = ("cases", "failure_mode_accuracy", "evidence_accuracy", "similar_failure_accuracy", "matrix")
    return {**{k: data[k] for k in keys}, "wrong": wrong}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--engine", default="fake")
    parser.add_argument("--keep-db", action="store_true")
    options = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="aria-eval-rca-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'eval.sqlite3'}",
        "REDIS_URL": "",
        "ARIA_ENGINE": options.engine,
        "DJANGO_SETTINGS_MODULE": "aria_project.settings",
    }
    manage(env, "migrate", "--noinput")
    main_set = run_set(env, options.engine, options.repeat, held_out=False)
    held_out = run_set(env, options.engine, options.repeat, held_out=True)
    gap = round(abs(main_set["failure_mode_accuracy"] - held_out["failure_mode_accuracy"]) * 100, 1)
    result = {
        "engine": options.engine,
        "repeat": options.repeat,
        "main": main_set,
        "held_out": held_out,
        "gap_points": gap,
        "goal": {"main_failure_mode_at_least": GOAL_MAIN, "held_out_within_points": GOAL_GAP_POINTS},
        "ok": main_set["failure_mode_accuracy"] >= GOAL_MAIN and gap <= GOAL_GAP_POINTS,
        "database": str(workdir) if options.keep_db else None,
    }
    if not options.keep_db:
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
