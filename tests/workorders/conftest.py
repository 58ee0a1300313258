import pytest

from tests.workorders import factories as f


@pytest.fixture
def cell(db):
    return f.make_cell("P-02")


@pytest.fixture
def vibration(cell):
    return f.make_signal(cell)


@pytest.fixture
def plant(cell, vibration):
    """P-02 with a vibration ramp to 5.0 mm/s, its KB and three months of failure history."""
    f.make_signal(cell, "bearing_temp_c", display_name="Bearing temperature", unit="°C", alert=80.0, trip=95.0)
    f.ramp(vibration)
    f.make_kb(cell)
    f.make_history(cell)
    return cell
