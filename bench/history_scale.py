"""History at plant scale (PostgreSQL): ingest through MQTT → connector and through the API relative
to real time with end-to-end lag, trend reads at each range against the flat raw table, and disk
per day with rollups and retention.

    DATABASE_URL=postgres://… .venv/bin/python bench/history_scale.py [--signals 50000] [--minutes 1]
        [--burst-seconds 20] [--burst-rate 1.5] [--per-message 100] [--lanes 2] [--api-seconds 20] [--api-clients 2] [--days 30]
        [--history-signals 20] [--interval 10] [--repeat 40] [--legs history,api,mqtt]
    CI (small): … bench/history_scale.py --short

1. history (bench/history_scale_history.py): --days of samples for --history-signals signals, one
   every --interval seconds, loaded by COPY into the partitioned samples table (partitions created
   first; the dirty-minute trigger fires as for any writer) and into a flat table shaped like the
   old one (surrogate id, unique (signal, time), foreign key); the rollup over everything; then
   `sentinel.selectors.trends` for one signal (rotating) over the last 1 h / 24 h / 30 d (100
   buckets), p95 of --repeat calls, against the same selector reading every range raw from the flat
   table, interleaved (goal p95 ≤ 50 ms per range); disk per signal-day measured, and the steady
   state under the retention settings.
2. api (bench/history_scale_api.py): --signals × --api-seconds ticks posted to
   `POST /api/v1/signals/samples` as fast as answered, by --api-clients gateways at once (each
   posting its own signals): rows/s ÷ real time (goal ≥ 1.2).
3. mqtt (bench/history_scale_mqtt.py): --signals on Sparkplug B edge nodes (--per-message metrics
   per DDATA) in their own process → Mosquitto at 127.0.0.1:1883 → a connector configured through
   Connector/ConnectorTag → `manage.py run_connectors` in its own process: a burst of
   --burst-seconds of data offered at --burst-rate × real time (rows/s ÷ real time, goal ≥ 1.2),
   then --minutes at 1 Hz (end-to-end lag p50/p95, stored ÷ published). The connector stores over
   --lanes database connections (ARIA_CONNECTOR_INGEST_LANES).
Every figure is measured at the counts printed beside it (nothing extrapolated but the disk per
day at 50k signals, labelled as such). Uses a throwaway database `<name>_bench_history`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")
os.environ.setdefault("ARIA_ENGINE", "fake")
if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
    sys.exit("bench/history_scale.py needs DATABASE_URL=postgres://… (partitions are PostgreSQL's)")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.history_scale_api import api_ingest  # noqa: E402
from bench.history_scale_history import disk, load_history, make_signals, roll_everything, trend_reads  # noqa: E402
from bench.history_scale_mqtt import mqtt_leg  # noqa: E402
from sentinel.history.partitions import partitions_ensure  # noqa: E402

LEGS = ("history", "api", "mqtt")
SHORT = {  # CI scale
    "days": 2, "history_signals": 200, "interval": 60, "repeat": 20,
    "signals": 1000, "api_seconds": 5, "minutes": 0.25, "burst_seconds": 5,
}  # fmt: skip


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=50_000, help="signals at 1 Hz for the api and mqtt legs")
    parser.add_argument("--minutes", type=float, default=1.0, help="mqtt leg: minutes at 1 Hz in real time")
    parser.add_argument("--burst-seconds", type=int, default=20, help="mqtt leg: seconds of data sent at once")
    parser.add_argument("--burst-rate", type=float, default=1.5, help="mqtt leg: burst offered at × real time")
    parser.add_argument("--per-message", type=int, default=100, help="mqtt leg: metrics per DDATA message")
    parser.add_argument("--lanes", type=int, default=2, help="mqtt leg: ARIA_CONNECTOR_INGEST_LANES of the connector")
    parser.add_argument("--api-seconds", type=int, default=20)
    parser.add_argument("--api-clients", type=int, default=2, help="api leg: gateways posting at once")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--history-signals", type=int, default=20)
    parser.add_argument("--interval", type=int, default=10, help="seconds between generated history samples")
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--legs", default=",".join(LEGS), help="comma-separated: history, api, mqtt")
    parser.add_argument("--short", action="store_true", help="CI scale: " + json.dumps(SHORT))
    args = parser.parse_args()
    if args.short:
        vars(args).update(SHORT)
    args.legs = [leg.strip() for leg in args.legs.split(",") if leg.strip()]
    if unknown := set(args.legs) - set(LEGS):
        parser.error(f"unknown leg(s): {', '.join(sorted(unknown))}")
    return args


def history_leg(args: argparse.Namespace) -> dict[str, object]:
    end = timezone.now()
    signals = make_signals(args.history_signals, "H")
    loaded = load_history([s.pk for s in signals], days=args.days, interval=args.interval, end=end)
    rolled = roll_everything(end)
    return {
        "history": {"days": args.days, "signals": len(signals), "interval_s": args.interval, **loaded, **rolled},
        "trend_p95": trend_reads(signals, repeat=args.repeat, end=end),
        "disk": disk(args.days, len(signals), args.interval),
    }


def main() -> None:
    args = arguments()
    settings.DEBUG = False
    load_before = os.getloadavg()
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench_history"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    report: dict[str, object] = {"bench": "history_scale", "database": "postgresql", "legs": args.legs}
    try:
        partitions_ensure(now=timezone.now())
        if "history" in args.legs:
            report.update(history_leg(args))
        if "api" in args.legs:
            report["api_ingest"] = api_ingest(args.signals, args.api_seconds, args.api_clients)
        if "mqtt" in args.legs:
            signals = make_signals(args.signals, "M")
            report["mqtt_ingest"] = mqtt_leg(
                signals,
                minutes=args.minutes,
                burst_seconds=args.burst_seconds,
                burst_rate=args.burst_rate,
                per_device=args.per_message,
                lanes=args.lanes,
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    met = [r["goal_met"] for r in report.get("trend_p95", {}).values()]  # type: ignore[union-attr]
    met += [report["api_ingest"]["goal_met"]] if "api_ingest" in report else []  # type: ignore[index]
    burst = (report.get("mqtt_ingest") or {}).get("burst")  # type: ignore[union-attr]
    met += [burst["goal_met"]] if burst else []
    report["goals_met"] = all(met)
    report["load_average_before_after"] = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    report["cpus"] = os.cpu_count()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
