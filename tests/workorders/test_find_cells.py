import pytest

from core.capabilities import CapabilityContext, dispatch
from sentinel.models import Cell, Line, Site


@pytest.mark.django_db
def test_find_cells_resolves_a_tag_to_its_id(operator):
    line = Line.objects.create(site=Site.objects.create(name="Plant"), name="Utilities")
    p02 = Cell.objects.create(line=line, tag="P-02", name="Cooling water pump P-02", onboarding_complete=True)
    Cell.objects.create(line=line, tag="C-01", name="Compressor C-01")

    result = dispatch("find_cells", {"query": "p-02"}, ctx=CapabilityContext(user=operator))

    assert not result.is_error
    assert [c["cell_id"] for c in result.content["cells"]] == [p02.pk]
    assert len(dispatch("find_cells", {}, ctx=CapabilityContext(user=operator)).content["cells"]) == 2


@pytest.mark.django_db
def test_find_cells_needs_the_operator_scope(make_user):
    result = dispatch("find_cells", {"query": "P"}, ctx=CapabilityContext(user=make_user("nobody")))
    assert result.is_error and "operator" in result.message


@pytest.mark.django_db
def test_find_cells_by_id_returns_every_asked_cell_and_refuses_a_bad_list(operator):
    line = Line.objects.create(site=Site.objects.create(name="Plant"), name="Utilities")
    cells = Cell.objects.bulk_create([Cell(line=line, tag=f"K-{n:03d}", name=f"Cell {n}") for n in range(1, 131)])
    ctx = CapabilityContext(user=operator)

    asked = [cells[0].pk, cells[-1].pk, 10**12]  # the last names no cell: it is simply not returned
    result = dispatch("find_cells", {"cell_ids": asked}, ctx=ctx)
    assert not result.is_error and [c["tag"] for c in result.content["cells"]] == ["K-001", "K-130"]
    every = dispatch("find_cells", {"cell_ids": [c.pk for c in cells]}, ctx=ctx)
    assert len(every.content["cells"]) == 130  # not cut at `limit` (20 by default, 100 at most)

    for bad in ([0], [2**63], ["x"], list(range(1, 502))):
        refused = dispatch("find_cells", {"cell_ids": bad}, ctx=ctx)
        assert refused.is_error and "cell_ids" in refused.message, bad
