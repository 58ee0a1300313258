"""The MQTT leg of bench/history_scale.py: edge nodes (bench/history_scale_edge.py, its own process)
→ Mosquitto → a Sparkplug B connector configured through Connector/ConnectorTag → the real
supervisor (`manage.py run_connectors`, its own process) → the ingest service → PostgreSQL.

1. burst: --burst-seconds of data for every signal (a store-and-forward backlog) offered at
   --burst-rate × real time; sustained stored rows/s ÷ the real-time rate (signals × 1 Hz), from
   the first publish to the last row stored (rows counted every second). Goal ≥ 1.2 with nothing
   lost (Mosquitto drops QoS 0 messages a subscriber does not take fast enough).
2. paced: --minutes at 1 Hz in real time; end-to-end lag = when a row is visible in the database
   (polled every POLL_S) − the time in its payload (when its message was built), p50/p95 over
   one probe signal per message (its last metric), and stored ÷ published.
Needs Django set up (imported by bench/history_scale.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from django.db import connection

from sentinel.history.schema import SAMPLES
from sentinel.models import Connector, ConnectorTag, SignalDefinition

ROOT = Path(__file__).resolve().parents[1]
POLL_S = 0.25
GOAL_REALTIME = 1.2
EDGE = str(ROOT / "bench" / "history_scale_edge.py")


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (and its waited-for children), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def connector_setup(signals: list[SignalDefinition], group: str, per_device: int, devices: int) -> Connector:
    connector = Connector.objects.create(
        name=group,
        kind=Connector.Kind.MQTT_SPARKPLUG_B,
        endpoint="mqtt://127.0.0.1:1883",
        topic_filter=f"spBv1.0/{group}/#",
    )
    ConnectorTag.objects.bulk_create(
        [
            ConnectorTag(
                connector=connector,
                source=f"{group}/n{k // (per_device * devices):03d}/d{k // per_device % devices:02d}/m{k % per_device:03d}",
                signal=signal,
            )
            for k, signal in enumerate(signals)
        ],
        batch_size=10_000,
    )
    return connector


def stored(ids: list[int], since: datetime, until: datetime) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {SAMPLES} WHERE signal_id BETWEEN %s AND %s AND time >= %s AND time < %s",
            [min(ids), max(ids), since, until],
        )
        return int(cursor.fetchone()[0])


def edge(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, EDGE, *args], stdout=subprocess.PIPE, text=True)


def edge_report(process: subprocess.Popen, timeout: float) -> dict:
    out, _ = process.communicate(timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def burst(ids: list[int], common: list[str], seconds: int, start_ms: int, rate: float) -> dict[str, object]:
    n = len(ids)
    expected = n * (seconds + 1)  # the births carry a value too
    since = datetime.fromtimestamp((start_ms - 1000) / 1000, UTC)
    until = datetime.fromtimestamp((start_ms + seconds * 1000) / 1000, UTC)
    args = ["--phase", "burst", "--seconds", str(seconds), "--start-ms", str(start_ms), "--rate", str(rate)]
    process = edge([*common, *args])
    rows, last_progress = 0, time.time()
    # Until every row is in, or nothing more arrived for 20 s after the edge process finished.
    while rows < expected and (process.poll() is None or time.time() - last_progress < 20):
        time.sleep(1.0)
        now_rows = stored(ids, since, until)
        if now_rows != rows:
            rows, last_progress = now_rows, time.time()
    published = edge_report(process, timeout=60)
    elapsed = last_progress - float(published["publish_started"])
    ratio = rows / elapsed / n
    return {
        "seconds_of_data": seconds,
        "offered_x_realtime": rate or "as fast as the edge process publishes",
        "published_metrics": expected,
        "stored": rows,
        "lost": expected - rows,
        "publish_s": round(float(published["publish_s"]), 2),
        "first_publish_to_last_row_s": round(elapsed, 2),
        "rows_per_s": round(rows / elapsed),
        "realtime_ratio": round(ratio, 2),
        # Kept up: every row in within 2 s of the last publish, so the capacity is at least the offer.
        "kept_up_with_offer": rows == expected and elapsed - float(published["publish_s"]) <= 2.0,
        "goal": f">= {GOAL_REALTIME}",
        "goal_met": ratio >= GOAL_REALTIME and rows == expected,
        "edge_cpu_s": published["cpu_s"],
        "resolution_s": 1.0,
    }


def paced(connector: Connector, ids: list[int], common: list[str], per_device: int, seconds: int) -> dict:
    probes = ids[per_device - 1 :: per_device] + ([ids[-1]] if len(ids) % per_device else [])
    after = {sid: datetime.now(UTC) for sid in probes}
    lags: list[float] = []
    started = datetime.now(UTC)
    process = edge([*common, "--phase", "paced", "--seconds", str(seconds)])
    quiet_since = None
    while True:
        time.sleep(POLL_S)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT s.signal_id, s.time FROM unnest(%s::bigint[], %s::timestamptz[]) AS p(sid, after) "
                f"JOIN {SAMPLES} s ON s.signal_id = p.sid AND s.time > p.after",
                [list(after), list(after.values())],
            )
            rows = cursor.fetchall()
        seen = time.time()
        for sid, at in rows:
            lags.append(seen - at.timestamp())
            after[sid] = max(after[sid], at)
        if process.poll() is None:
            continue
        quiet_since = quiet_since or time.time() if not rows else None
        if quiet_since and time.time() - quiet_since > 5:
            break
    published = edge_report(process, timeout=10)
    metrics = int(published["messages"]) * per_device if len(ids) % per_device == 0 else None
    rows_stored = stored(ids, started, datetime.now(UTC))
    lags.sort()
    return {
        "seconds": seconds,
        "published_messages": published["messages"],
        "stored_rows": rows_stored,
        "stored_per_published": round(rows_stored / (metrics + len(ids)), 4) if metrics else None,
        "edge_late_ticks": published["late_ticks"],
        "lag_probes": len(lags),
        "lag_p50_s": round(statistics.median(lags), 3) if lags else None,
        "lag_p95_s": round(lags[int(len(lags) * 0.95)], 3) if lags else None,
        "lag_max_s": round(lags[-1], 3) if lags else None,
        "lag_resolution_s": POLL_S,
        "edge_cpu_s": published["cpu_s"],
    }


def mqtt_leg(
    signals: list[SignalDefinition],
    *,
    minutes: float,
    burst_seconds: int,
    burst_rate: float,
    per_device: int,
    lanes: int = 1,
) -> dict:
    devices = 10
    group = f"bench-{uuid.uuid4().hex[:8]}"
    ids = [s.pk for s in signals]
    connector = connector_setup(signals, group, per_device, devices)
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "ARIA_CONNECTOR_BACKLOG": str(max(100_000, len(ids) * 120)),  # 2 min: a slow round must not drop
        "ARIA_CONNECTOR_INGEST_LANES": str(lanes),
    }
    log = open(ROOT / "var" / "bench_history_connectors.log", "w")  # noqa: SIM115 (closed below)
    supervisor = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "run_connectors"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.time() + 60
        while Connector.objects.get(pk=connector.pk).status != Connector.Status.CONNECTED:
            if time.time() > deadline or supervisor.poll() is not None:
                raise SystemExit("the connector did not connect (see var/bench_history_connectors.log)")
            time.sleep(0.2)
        time.sleep(0.5)  # the subscription's SUBACK
        common = ["--group", group, "--signals", str(len(ids)), "--per-device", str(per_device)]
        common += ["--devices", str(devices)]
        cpu = cpu_seconds(supervisor.pid)
        start_ms = int((time.time() - burst_seconds - 600) * 1000) // 1000 * 1000
        burst_report = burst(ids, common, burst_seconds, start_ms, burst_rate) if burst_seconds else None
        burst_cpu = cpu_seconds(supervisor.pid) - cpu
        paced_report = paced(connector, ids, common, per_device, round(minutes * 60)) if minutes else None
        paced_cpu = cpu_seconds(supervisor.pid) - cpu - burst_cpu
    finally:
        supervisor.terminate()
        supervisor.wait(timeout=30)
        log.close()
    connector.refresh_from_db()
    if burst_report:
        burst_report["connector_cpu_s"] = round(burst_cpu, 1)
    if paced_report:
        paced_report["connector_cpu_s"] = round(paced_cpu, 1)
    return {
        "path": "edge process → Mosquitto 127.0.0.1:1883 (Sparkplug B DDATA, QoS 0) → manage.py run_connectors",
        "signals": len(ids),
        "ingest_lanes": lanes,
        "metrics_per_message": per_device,
        "messages_per_s_at_1hz": -(-len(ids) // per_device),
        "burst": burst_report,
        "paced_1hz": paced_report,
        "connector": {
            "messages_total": connector.messages_total,
            "samples_total": connector.samples_total,
            "error_count": connector.error_count,
            "unknown_tag_count": connector.unknown_tag_count,
            "last_error": connector.last_error,
        },
    }
