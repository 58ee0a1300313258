import itertools

import pytest

from core.capabilities import Tier
from orchestrator.choices import GATE_TABLE, Autonomy, gate_decision

EXPECTED = {
    ("ask_all", "read"): "ask",
    ("ask_all", "safe"): "ask",
    ("ask_all", "mutate"): "ask",
    ("ask_all", "gated"): "ask",
    ("ask_mutations", "read"): "run",
    ("ask_mutations", "safe"): "run",
    ("ask_mutations", "mutate"): "ask",
    ("ask_mutations", "gated"): "ask",
    ("auto", "read"): "run",
    ("auto", "safe"): "run",
    ("auto", "mutate"): "run",
    ("auto", "gated"): "ask",
}


@pytest.mark.parametrize(("autonomy", "tier"), list(itertools.product(Autonomy.values, [t.label for t in Tier])))
def test_gate_table_every_autonomy_by_tier(autonomy, tier):
    assert gate_decision(autonomy, tier) == EXPECTED[(autonomy, tier)]
    assert gate_decision(autonomy, Tier.parse(tier)) == EXPECTED[(autonomy, tier)]


def test_table_covers_exactly_every_combination():
    assert set(GATE_TABLE) == set(Autonomy.values)
    assert all(set(row) == set(Tier) for row in GATE_TABLE.values())
    assert len(EXPECTED) == len(Autonomy.values) * len(Tier)


@pytest.mark.parametrize("autonomy", [*Autonomy.values, "unknown", ""])
def test_gated_always_asks(autonomy):
    assert gate_decision(autonomy, Tier.GATED) == "ask"


def test_unknown_autonomy_fails_closed():
    assert {gate_decision("yolo", t) for t in Tier} == {"ask"}
