import io

import pytest
from django.utils import timezone

from sentinel import seed as sentinel_seed
from sentinel.models import Alarm, Cell, SignalDefinition
from sentinel.services import samples_ingest
from workorders import seed as workorders_seed
from workorders.models import EquipmentKB, FailureHistory, LogbookEntry, ProductionRecord, ShiftAssignment, WorkOrder

pytestmark = pytest.mark.django_db

MODELS = (EquipmentKB, FailureHistory, LogbookEntry, ProductionRecord, ShiftAssignment)


@pytest.fixture
def seeded():
    out = io.StringIO()
    sentinel_seed.seed(out)
    workorders_seed.seed(out)
    return out.getvalue()


def test_seed_is_idempotent_and_covers_every_cell(seeded):
    counts = [m.objects.count() for m in MODELS]
    workorders_seed.seed(io.StringIO())
    assert [m.objects.count() for m in MODELS] == counts
    cells = Cell.objects.all()
    assert cells.count() >= 3
    assert EquipmentKB.objects.count() == cells.count()
    assert all(ProductionRecord.objects.filter(cell=c).count() >= 90 for c in cells)
    assert ShiftAssignment.objects.filter(date__gte=timezone.localdate()).exists()
    assert LogbookEntry.objects.filter(cell__tag="P-02").count() >= 4


def test_seed_history_spans_three_months_with_the_p02_bearing_failure(seeded):
    bearing = FailureHistory.objects.get(cell__tag="P-02", failure_mode="bearing_wear")
    assert bearing.signal_patterns == {"vibration_mm_s": {"peak": 5.4, "duration_min": 14}}
    modes = set(FailureHistory.objects.exclude(cell__tag="P-02").values_list("failure_mode", flat=True))
    assert {"seal_leak", "misalignment"} <= modes
    assert FailureHistory.objects.filter(failure_mode="cavitation").exists()
    oldest = FailureHistory.objects.order_by("failure_time").first().failure_time
    assert (timezone.now() - oldest).days >= 75
    kb = EquipmentKB.objects.get(cell__tag="P-02").data
    refs = {p["ref"] for p in kb["spare_parts"]}
    assert {p["ref"] for p in kb["failure_modes"]["bearing_wear"]["parts"]} <= refs


def test_seed_without_sentinel_creates_p02_consistently():
    workorders_seed.seed(io.StringIO())
    assert Cell.objects.get(tag="P-02").kb.data["failure_modes"]
    assert FailureHistory.objects.filter(cell__tag="P-02", failure_mode="bearing_wear").exists()


def test_demo_p02_breach_ends_in_an_open_order_citing_the_seeded_bearing_failure(
    seeded, django_capture_on_commit_callbacks
):
    vibration = SignalDefinition.objects.get(cell__tag="P-02", key="vibration_mm_s")
    now = timezone.now()
    ramp = [
        {"signal_id": vibration.pk, "time": (now - timezone.timedelta(seconds=60 * (15 - i))).isoformat(), "value": v}
        for i, v in enumerate([3.0, 3.4, 3.8, 4.1, 4.3, 4.6, 4.8, 4.9, 5.0, 5.0, 5.0, 5.1, 5.0, 5.0, 4.9, 5.0])
    ]
    with django_capture_on_commit_callbacks(execute=True):
        samples_ingest(samples=ramp)
    alarm = Alarm.objects.get(signal=vibration)
    wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
    bearing = FailureHistory.objects.get(cell__tag="P-02", failure_mode="bearing_wear", work_order__isnull=True)
    assert wo.status == "open"
    assert wo.rca_summary.startswith("bearing_wear")
    assert bearing.failure_time.date().isoformat() in wo.rca_summary
    assert {"ref": "SKF-6310-2Z-C3", "qty": 1} in wo.required_parts
    assert "vibration_analysis" in wo.required_skills
