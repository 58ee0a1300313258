import json

from core.capabilities import CapabilityResult


def test_long_json_results_stay_parseable_by_dropping_list_tail():
    rows = [{"id": i, "text": "x" * 100} for i in range(500)]
    text = CapabilityResult("t", content={"cell_id": 1, "failures": rows}).as_text(limit=5_000)

    parsed = json.loads(text)
    assert len(text) <= 5_000
    assert parsed["truncated"] is True
    assert parsed["cell_id"] == 1
    assert parsed["failures"][0] == rows[0]  # newest-first lists keep their head


def test_short_results_are_unchanged_and_errors_are_marked():
    assert json.loads(CapabilityResult("t", content=[1, 2]).as_text()) == [1, 2]
    assert CapabilityResult("t", is_error=True, message="boom").as_text() == "ERROR: boom"
