"""Coordinator scenarios about a named piece of equipment ("What happened on P-02?").

The coordinator used to answer about whatever plan was in focus and never looked at P-02. Now
the fake gateway, given the reading "a question about P-02", resolves the tag with find_cells, reads that cell's work orders and current
signals, and answers from them, citing the work order ids; plans are cited only when they are
about that cell. Same assertions as the scenario suite: tools, actions, state after, transcript.
"""

import pytest

from orchestrator.models import Plan
from orchestrator.offline.reading import Reading
from tests.orchestrator.conftest import build_plan, start
from tests.orchestrator.test_coordinator_scenarios import SURVEY, allowed, tools, transcript, turn_on
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
CELL_READS = ["find_cells", "get_work_orders", "get_current_signals"]
ABOUT_P02 = Reading("question", equipment=("P-02",))


def _p02_with_a_vibration_alarm():
    cell = f.make_cell("P-02")
    signal = f.make_signal(cell)
    f.ramp(signal, peak=5.2)  # latest 5.2 mm/s: above the 4.5 alert limit
    f.make_alarm(signal, value=5.2)
    wo = f.make_work_order(cell, status="detected", priority="high", title="High vibration on P-02")
    other = f.make_work_order(f.make_cell("C-01"), status="detected", title="Conveyor belt slip")
    return cell, wo, other


def test_what_happened_on_p02_reads_the_cell_not_an_unrelated_plan(operator):
    cell, wo, other = _p02_with_a_vibration_alarm()
    unrelated = start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "j"}}]))
    assert unrelated.status == "running"
    turn = turn_on(operator, "What happened on P-02?", ABOUT_P02)
    assert turn.context_packet["named_equipment"] == ["P-02"]
    assert tools(turn) == [*SURVEY, *CELL_READS]
    args = {c["tool"]: c["args"] for c in turn.tool_calls}
    assert args["find_cells"] == {"query": "P-02"}
    assert args["get_work_orders"]["cell_id"] == cell.pk and args["get_current_signals"] == {"cell_id": cell.pk}
    assert allowed(turn) == ["answer"] and turn.status == "ok"
    # grounded in what the reads returned: the order, its state, the abnormal signal
    assert f"work orders: #{wo.pk} 'High vibration on P-02' is detected (high)." in turn.answer
    assert "vibration_mm_s 5.2 mm/s (alert)" in turn.answer
    assert "Conveyor" not in turn.answer and f"Plan {unrelated.pk}" not in turn.answer
    assert Plan.objects.get(pk=unrelated.pk).status == "running"  # nothing changed
    stored = transcript(turn)
    assert stored.references["work_order_ids"] == [wo.pk] and stored.references["plan_ids"] == []
    assert other.pk not in stored.references["work_order_ids"]


def test_a_plan_about_that_cell_is_cited_with_it(operator):
    _cell, wo, _ = _p02_with_a_vibration_alarm()
    about = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    Plan.objects.filter(pk=about.pk).update(goal="Investigate P-02", context_refs=[{"type": "work_order", "id": wo.pk}])
    turn = turn_on(operator, "Is anything wrong with P-02?", ABOUT_P02)
    assert tools(turn) == [*SURVEY, *CELL_READS] and allowed(turn) == ["answer"]
    assert f"{about.pk} 'Investigate P-02' (draft)" in turn.answer
    stored = transcript(turn)
    assert stored.references["plan_ids"] == [about.pk] and stored.references["work_order_ids"] == [wo.pk]


def test_a_tag_with_no_cell_says_so_without_guessing(operator):
    f.make_cell("P-021")
    turn = turn_on(operator, "What happened on P-02?", ABOUT_P02)
    assert tools(turn) == [*SURVEY, "find_cells"] and allowed(turn) == ["answer"]
    assert "No cell is tagged P-02. Similar tags: P-021." in turn.answer
    assert transcript(turn).references["work_order_ids"] == []
