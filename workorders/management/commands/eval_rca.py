"""Score the Investigator on the fault library (workorders/evaluation.py).

    python manage.py eval_rca                          # offline (fake engine), main set, once
    python manage.py eval_rca --repeat 5 --held-out    # held-out set: other seeds, 1.6× noise
    python manage.py eval_rca --engine anthropic --scenario cavitation --scenario seal_leak

Prints a confusion matrix (true mode × predicted mode), the three scores, then one JSON line
(`--json-only` prints only the JSON). The run is stored as an RcaEvaluation.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sentinel.fault_scenarios import FAULT_SCENARIOS
from workorders.evaluation import CaseOutcome, evaluation_as_dict, rca_evaluation_run

ENGINES = ("fake", "anthropic", "openai", "ollama")


def matrix_text(matrix: dict[str, dict[str, int]]) -> str:
    """The confusion matrix as a fixed-width table (rows: truth, columns: predicted)."""
    predicted = sorted({p for row in matrix.values() for p in row})
    width = max([len(p) for p in predicted] + [len(t) for t in matrix] + [5]) + 1
    lines = ["truth \\ predicted".ljust(width) + "".join(p[:width].rjust(width) for p in predicted)]
    for truth, row in matrix.items():
        lines.append(truth.ljust(width) + "".join(str(row.get(p, "")).rjust(width) for p in predicted))
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Run the fault library through ingest → alarm → Investigator and score the RCAs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--engine", choices=ENGINES, default="fake")
        parser.add_argument("--repeat", type=int, default=1, help="Cases per scenario (seeds), 1–50.")
        parser.add_argument("--held-out", action="store_true", help="The held-out set (other seeds, more noise).")
        parser.add_argument(
            "--scenario", action="append", choices=FAULT_SCENARIOS, help="Only this scenario (repeatable)."
        )
        parser.add_argument("--keep-plant", action="store_true", help="Keep the scratch plant for inspection.")
        parser.add_argument("--json-only", action="store_true", help="Print only the JSON result.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not 1 <= options["repeat"] <= 50:
            raise CommandError("--repeat must be between 1 and 50.")
        quiet = options["json_only"]

        def progress(outcome: CaseOutcome) -> None:
            if not quiet:
                mark = "ok " if outcome.mode_correct else "BAD"
                self.stdout.write(
                    f"{mark} {outcome.scenario:<15} seed {outcome.seed:<6} {outcome.variant:<34} → {outcome.predicted}"
                )

        evaluation = rca_evaluation_run(
            engine=options["engine"],
            repeat=options["repeat"],
            held_out=options["held_out"],
            scenarios=options["scenario"],
            keep_plant=options["keep_plant"],
            on_case=progress,
        )
        data = evaluation_as_dict(evaluation, with_results=True)
        if not quiet:
            kind = "held-out" if evaluation.held_out else "main"
            self.stdout.write(
                f"\nRCA evaluation #{evaluation.pk} ({evaluation.engine}, {kind} set, {evaluation.cases} cases)"
            )
            self.stdout.write(matrix_text(evaluation.matrix))
            self.stdout.write(
                f"failure mode {evaluation.failure_mode_accuracy:.1%} · evidence {evaluation.evidence_accuracy:.1%}"
                f" · similar past failure {evaluation.similar_failure_accuracy:.1%}\n"
            )
        self.stdout.write(json.dumps(data, default=str))
