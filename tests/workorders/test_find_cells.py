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
