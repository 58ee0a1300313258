"""Edge nodes for bench/history_scale.py: a separate process publishing Sparkplug B to the broker as a
plant's gateways would — NBIRTH, a DBIRTH per device (names + aliases, unique within the node), then DDATA by alias, many
metrics per message, every metric stamped with the time the message was built.

    python bench/history_scale_edge.py --group G --signals N --phase paced --seconds S
    python bench/history_scale_edge.py --group G --signals N --phase burst --seconds S --start-ms MS

Signal k is metric m{k % per_device} of device d{k // per_device % devices} of node
n{k // (per_device * devices)}; its source is `G/nNNN/dNN/mNNN`.
- paced: S seconds at 1 Hz, in real time (what a running plant sends).
- burst: S seconds of data stamped MS, MS+1000, … (a store-and-forward backlog after an outage),
  serialized first, then published at --rate × real time (0: as fast as the client can).
Prints one JSON line: messages, metrics, publish seconds, ticks that started late.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sentinel.connectors.sparkplug_b_pb2 import Payload  # protobuf only, no Django

DOUBLE, INT64 = 10, 4


def source(group: str, node: int, device: int, metric: int) -> str:
    return f"{group}/n{node:03d}/d{device:02d}/m{metric:03d}"


def layout(signals: int, per_device: int, devices: int) -> list[tuple[int, int, int]]:
    """(node, device, metrics in it) for every device message, in signal order."""
    out, k = [], 0
    while k < signals:
        n = min(per_device, signals - k)
        out.append((k // (per_device * devices), k // per_device % devices, n))
        k += n
    return out


def value(k: int, tick: int) -> float:
    """Normal values (no alarm): this measures the storage path, not alarm handling."""
    return round(2.5 + (k * 7 + tick) % 50 / 100, 2)


class EdgeNodes:
    def __init__(self, args: argparse.Namespace) -> None:
        self.group, self.per_device = args.group, args.per_device
        self.devices = layout(args.signals, args.per_device, args.devices)
        self.seq: dict[int, int] = {}
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"{args.group}-{args.phase}")
        self.client.max_queued_messages_set(0)
        self.client.connect(args.host, args.port, keepalive=60)
        self.client.loop_start()

    def _next_seq(self, node: int) -> int:
        seq = self.seq.get(node, -1) + 1
        self.seq[node] = seq % 256
        return seq % 256

    def _topic(self, kind: str, node: int, device: int | None = None) -> str:
        tail = f"/d{device:02d}" if device is not None else ""
        return f"spBv1.0/{self.group}/{kind}/n{node:03d}{tail}"

    def births(self, ms: int) -> int:
        sent = 0
        for node in sorted({n for n, _, _ in self.devices}):
            self.seq[node] = -1
            birth = Payload(timestamp=ms, seq=self._next_seq(node))
            birth.metrics.add(name="bdSeq", datatype=INT64, long_value=0)
            self.client.publish(self._topic("NBIRTH", node), birth.SerializeToString(), qos=0)
            sent += 1
        for index, (node, device, n) in enumerate(self.devices):
            birth = Payload(timestamp=ms, seq=self._next_seq(node))
            base = index * self.per_device
            for m in range(n):
                birth.metrics.add(
                    name=f"m{m:03d}",
                    alias=device * self.per_device + m,
                    timestamp=ms,
                    datatype=DOUBLE,
                    double_value=value(base + m, -1),
                )
            self.client.publish(self._topic("DBIRTH", node, device), birth.SerializeToString(), qos=0)
            sent += 1
        return sent

    def ddata(self, index: int, tick: int, ms: int) -> tuple[str, bytes]:
        node, device, n = self.devices[index]
        message = Payload(timestamp=ms, seq=self._next_seq(node))
        add, base, first_alias = message.metrics.add, index * self.per_device, device * self.per_device
        for m in range(n):
            add(alias=first_alias + m, timestamp=ms, datatype=DOUBLE, double_value=value(base + m, tick))
        return self._topic("DDATA", node, device), message.SerializeToString()

    def paced(self, seconds: int) -> dict[str, object]:
        started, late, messages = time.time(), 0, 0
        self.births(int(started * 1000))
        first = int(started) + 1.0
        for tick in range(seconds):
            due = first + tick
            if time.time() > due + 0.5:
                late += 1
            time.sleep(max(0.0, due - time.time()))
            for index in range(len(self.devices)):
                topic, body = self.ddata(index, tick, int(time.time() * 1000))
                self.client.publish(topic, body, qos=0)
                messages += 1
        return {"messages": messages, "late_ticks": late, "first_tick": first}

    def burst(self, seconds: int, start_ms: int, rate: float) -> dict[str, object]:
        """`rate` × real time (0 = as fast as the client can; the broker drops QoS 0 messages a
        subscriber cannot take fast enough, so a capacity figure needs a rate it keeps up with)."""
        births = self.births(start_ms - 1000)
        prepared = [
            self.ddata(i, tick, start_ms + tick * 1000) for tick in range(seconds) for i in range(len(self.devices))
        ]
        started = time.time()
        per_s = rate * len(self.devices)
        for i, (topic, body) in enumerate(prepared):
            if per_s and i % 50 == 0:
                time.sleep(max(0.0, started + i / per_s - time.time()))
            self.client.publish(topic, body, qos=0)
        return {
            "messages": len(prepared),
            "births": births,
            "publish_started": started,
            "publish_s": time.time() - started,
        }

    def close(self) -> None:
        time.sleep(0.5)  # let the network thread write what is queued
        self.client.disconnect()
        self.client.loop_stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=1883)
    parser.add_argument("--group", required=True)
    parser.add_argument("--signals", type=int, required=True)
    parser.add_argument("--per-device", type=int, default=100, help="metrics per DDATA message")
    parser.add_argument("--devices", type=int, default=10, help="devices per edge node")
    parser.add_argument("--phase", choices=("paced", "burst"), required=True)
    parser.add_argument("--seconds", type=int, required=True)
    parser.add_argument("--start-ms", type=int, default=0)
    parser.add_argument("--rate", type=float, default=0.0, help="burst: × real time (0 = flat out)")
    args = parser.parse_args()
    nodes = EdgeNodes(args)
    cpu = time.process_time()
    report = nodes.paced(args.seconds) if args.phase == "paced" else nodes.burst(args.seconds, args.start_ms, args.rate)
    nodes.close()
    print(json.dumps({**report, "cpu_s": round(time.process_time() - cpu, 2)}), flush=True)


if __name__ == "__main__":
    main()
