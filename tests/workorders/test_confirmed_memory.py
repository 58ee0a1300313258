"""Confirmed memory: only a cause a technician confirmed or corrected is a confirmed failure in the
next investigation's context, its failure-history tool and its similarity matching."""

from __future__ import annotations

import pytest

from core.capabilities import CapabilityContext, dispatch
from tests.workorders import factories as f
from tests.workorders.execution_helpers import analysed_order, report
from workorders import kpis, selectors
from workorders.agents import investigator
from workorders.models import FailureHistory
from workorders.offline.pattern import closest_failure
from workorders.services.execution import work_order_complete, work_order_start

pytestmark = pytest.mark.django_db
CORRECTION = "DE bearing outer race spalled; grease dried out after a missed lubrication round."


def sections(prompt: str) -> tuple[str, str]:
    """(confirmed section, unconfirmed section) of the Investigator's failures block."""
    block = prompt.split("Confirmed failures (a technician confirmed or corrected the cause):", 1)[1]
    confirmed, _, unconfirmed = block.partition("Unconfirmed RCA proposals")
    return confirmed, unconfirmed


def corrected_failure(cell, operator) -> FailureHistory:
    wo = analysed_order(cell, mode="cavitation")
    work_order_start(work_order=wo, actor=operator)
    work_order_complete(work_order=wo, actor=operator, **report(rca_verdict="corrected", actual_root_cause=CORRECTION))
    return FailureHistory.objects.get(work_order=wo)


def test_a_corrected_cause_is_a_confirmed_failure_in_the_next_investigation(cell, operator):
    failure = corrected_failure(cell, operator)
    next_order = f.make_work_order(cell, title="Vibration high again")

    confirmed, unconfirmed = sections(investigator.build_spec(next_order).system_prompt)

    line = next(x for x in confirmed.splitlines() if x.startswith(f"- #{failure.pk} "))
    assert "bearing_wear" in line and "corrected by a technician" in line and "proposed cavitation" in line
    assert "outer race spalled" in line
    assert f"#{failure.pk} " not in unconfirmed

    # the Investigator's history tool (confirmed only) returns the actual cause, the proposal beside it
    result = dispatch(
        "workorders.get_failure_history",
        {"cell_id": cell.pk, "confirmed_only": True},
        ctx=CapabilityContext(user=operator),
    )
    row = next(r for r in result.content["failures"] if r["id"] == failure.pk)
    assert (row["failure_mode"], row["proposed_failure_mode"], row["verification"]) == (
        "bearing_wear",
        "cavitation",
        "corrected",
    )
    match, score = closest_failure({"vibration_mm_s": {"peak": 5.0, "duration_min": 12}}, result.content["failures"])
    assert match["id"] == failure.pk and score > 0.9


def test_an_unconfirmed_rca_is_not_a_confirmed_failure(cell, operator):
    proposal = FailureHistory.objects.get(work_order=analysed_order(cell, mode="cavitation"))
    next_order = f.make_work_order(cell, title="Vibration high again")

    confirmed, unconfirmed = sections(investigator.build_spec(next_order).system_prompt)

    assert f"#{proposal.pk} " not in confirmed and "- none recorded" in confirmed
    assert f"- #{proposal.pk} " in unconfirmed and "unconfirmed RCA proposal" in unconfirmed
    assert selectors.recent_failures(cell, confirmed_only=True) == []
    rows = [selectors.failure_as_dict(proposal)]
    assert closest_failure({"vibration_mm_s": {"peak": 5.0, "duration_min": 12}}, rows) == (None, 0.0)


def test_rca_accuracy_and_kpis_count_confirmed_repairs(cell, operator):
    corrected_failure(cell, operator)
    confirmed_wo = analysed_order(cell)
    work_order_start(work_order=confirmed_wo, actor=operator)
    work_order_complete(work_order=confirmed_wo, actor=operator, **report())
    analysed_order(cell)  # still a proposal

    assert selectors.rca_accuracy(cell_id=cell.pk) == {"confirmed": 1, "corrected": 1, "total": 2, "accuracy": 0.5}
    assert kpis.mtbf(cell)["failures"] == 2
    assert kpis.mttr(cell)["repairs"] == 2
