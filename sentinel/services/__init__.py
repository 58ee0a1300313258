"""Sentinel services: every write to alarms, samples and latest values goes through these."""

from sentinel.services.alarms import (
    alarm_acknowledge,
    alarm_put_out_of_service,
    alarm_return_to_service,
    alarm_shelve,
    alarm_unshelve,
    alarm_unshelve_expired,
    alarm_unshelve_for_work_order_closed,
    alarms_out_of_service_for_unevaluated,
)
from sentinel.services.detection import (
    AlarmEscalation,
    AlarmRaise,
    alarm_clear,
    alarm_clear_many,
    alarm_escalate_many,
    alarm_raise,
    alarm_raise_many,
)
from sentinel.services.evaluation import EvaluationSummary, signals_evaluate
from sentinel.services.ingest import IngestResult, samples_ingest, samples_validate
from sentinel.services.scan import ScanSummary, sentinel_scan

__all__ = [
    "AlarmEscalation",
    "AlarmRaise",
    "EvaluationSummary",
    "IngestResult",
    "ScanSummary",
    "alarm_acknowledge",
    "alarm_clear",
    "alarm_clear_many",
    "alarm_escalate_many",
    "alarm_put_out_of_service",
    "alarm_raise",
    "alarm_raise_many",
    "alarm_return_to_service",
    "alarm_shelve",
    "alarm_unshelve",
    "alarm_unshelve_expired",
    "alarm_unshelve_for_work_order_closed",
    "alarms_out_of_service_for_unevaluated",
    "samples_ingest",
    "samples_validate",
    "sentinel_scan",
    "signals_evaluate",
]
