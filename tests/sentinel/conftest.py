import pytest

from tests.sentinel.factories import make_cell, make_signal


@pytest.fixture
def cell(db):
    return make_cell("P-02")


@pytest.fixture
def vibration(cell):
    return make_signal(cell, "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)


@pytest.fixture
def pressure(cell):
    return make_signal(cell, "discharge_pressure_bar", unit="bar", low_alert=3.0, alert=9.0, trip=None, deadband=0.1)


@pytest.fixture
def api_client(client, operator):
    client.force_login(operator)
    return client
