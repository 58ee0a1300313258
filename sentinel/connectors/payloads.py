"""Decoding connector payloads (untrusted): JSON topic values and Sparkplug B state."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from google.protobuf.message import DecodeError

from sentinel.connectors.feed import Feed
from sentinel.connectors.sparkplug_b_pb2 import Payload
from sentinel.services.ingest import EARLIEST, VALUE_RANGE, value_in_range

MAX_PAYLOAD_BYTES = 256 * 1024
MAX_VALUES_PER_MESSAGE = 10_000


class PayloadError(ValueError):
    """A payload that cannot be read: counted as a connector error, never fatal."""


def _number(raw: Any, where: str) -> float:
    if type(raw) not in (int, float):
        raise PayloadError(f"{where}: value must be a number")
    try:
        value = float(raw)
    except OverflowError:  # an integer beyond any float
        raise PayloadError(f"{where}: value {VALUE_RANGE}") from None
    if not value_in_range(value):
        raise PayloadError(f"{where}: value {VALUE_RANGE}")
    return value


def _time(raw: Any, received_at: datetime, where: str) -> datetime:
    """ISO 8601 with a timezone, or epoch milliseconds; absent = when it arrived. Not before
    0001-01-02 (UTC), as on the API: year 1 with a positive offset cannot be stored."""
    if raw is None:
        return received_at
    if type(raw) in (int, float):
        try:
            value = datetime.fromtimestamp(raw / 1000.0, UTC)
        except (OverflowError, OSError, ValueError):
            raise PayloadError(f"{where}: time out of range") from None
    elif isinstance(raw, str):
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            raise PayloadError(f"{where}: time must be ISO 8601 or epoch milliseconds") from None
        if value.tzinfo is None:
            raise PayloadError(f"{where}: time must include a timezone")
    else:
        raise PayloadError(f"{where}: time must be ISO 8601 or epoch milliseconds")
    if value < EARLIEST:
        raise PayloadError(f"{where}: time out of range (before 0001-01-02)")
    return value


def json_values(payload: bytes, received_at: datetime) -> list[tuple[datetime, float]]:
    """`{"value": 1.2, "time": "…"}`, a list of those, or a bare number."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload larger than {MAX_PAYLOAD_BYTES} bytes")
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        raise PayloadError("payload is not JSON") from None
    except RecursionError:  # [[[[…: not a value, and not worth a logged traceback per message
        raise PayloadError("payload nests too deep") from None
    if type(data) in (int, float):
        return [(received_at, _number(data, "payload"))]
    items = data if isinstance(data, list) else [data]
    if len(items) > MAX_VALUES_PER_MESSAGE:
        raise PayloadError(f"at most {MAX_VALUES_PER_MESSAGE} values per message")
    values = []
    for index, item in enumerate(items):
        where = f"[{index}]" if isinstance(data, list) else "payload"
        if not isinstance(item, dict) or "value" not in item:
            raise PayloadError(f"{where}: expected an object with value (and optional time)")
        values.append((_time(item.get("time"), received_at, where), _number(item["value"], where)))
    return values


# --- Sparkplug B ------------------------------------------------------------------------------
SPARKPLUG_NAMESPACE = "spBv1.0"
REBIRTH_METRIC = "Node Control/Rebirth"
BD_SEQ_METRIC = "bdSeq"
CONTROL_PREFIXES = ("Node Control/", "Device Control/")
TEXT_VALUES = ("string_value", "bytes_value")


@dataclass
class EdgeNode:
    """What one edge node announced: metric aliases (node and devices) and its sequence."""

    aliases: dict[int, str] = field(default_factory=dict)  # alias → source "group/node[/device]/metric"
    sources: dict[str, set[str]] = field(default_factory=dict)  # device ("" = node) → its metric sources
    seq: int | None = None
    born: bool = False
    bd_seq: int | None = None  # the birth/death sequence its NBIRTH announced


def _bd_seq(message: Any) -> int | None:
    for metric in message.metrics:
        if metric.name == BD_SEQ_METRIC and metric.WhichOneof("value") in ("int_value", "long_value"):
            return int(getattr(metric, metric.WhichOneof("value")))
    return None


@dataclass(frozen=True)
class SparkplugTopic:
    group: str
    message_type: str
    node: str
    device: str  # "" for node-level messages

    def source(self, metric: str) -> str:
        return "/".join(p for p in (self.group, self.node, self.device, metric) if p)


def sparkplug_topic(topic: str) -> SparkplugTopic | None:
    parts = topic.split("/")
    if len(parts) not in (4, 5) or parts[0] != SPARKPLUG_NAMESPACE:
        return None
    return SparkplugTopic(parts[1], parts[2], parts[3], parts[4] if len(parts) == 5 else "")


# What one connector remembers of the births it received is bounded: anyone who may publish on the
# broker could otherwise announce edge nodes and metrics until the connectors process ran out of memory.
MAX_EDGE_NODES = 10_000
MAX_NODE_METRICS = 100_000  # aliases and metric names of one edge node, its devices included


class SparkplugState:
    """Per-connector Sparkplug B host state: births, aliases, sequence numbers, deaths."""

    def __init__(
        self, feed: Feed, *, max_nodes: int = MAX_EDGE_NODES, max_node_metrics: int = MAX_NODE_METRICS
    ) -> None:
        self.feed = feed
        self.nodes: dict[tuple[str, str], EdgeNode] = {}
        self.seq_gaps = 0
        self.max_nodes = max_nodes
        self.max_node_metrics = max_node_metrics

    def handle(self, topic: SparkplugTopic, payload: bytes, received_at: datetime) -> bool:
        """Apply one message. True when the edge node should be asked for a rebirth (data before
        its birth, or a sequence gap)."""
        if len(payload) > MAX_PAYLOAD_BYTES:
            raise PayloadError(f"payload larger than {MAX_PAYLOAD_BYTES} bytes")
        try:
            message = Payload.FromString(payload)
        except DecodeError:
            raise PayloadError("not a Sparkplug B protobuf payload") from None
        key = (topic.group, topic.node)
        kind = topic.message_type
        if kind == "NBIRTH":
            if key not in self.nodes and len(self.nodes) >= self.max_nodes:
                raise PayloadError(f"more than {self.max_nodes} edge nodes: this NBIRTH is ignored")
            seq = message.seq if message.HasField("seq") else None
            self.nodes[key] = node = EdgeNode(born=True, seq=seq, bd_seq=_bd_seq(message))
            self._birth(node, topic, message, received_at)
            return False
        found = self.nodes.get(key)
        if kind == "NDEATH":
            death_bd_seq = _bd_seq(message)
            if found is not None and None not in (death_bd_seq, found.bd_seq) and death_bd_seq != found.bd_seq:
                return False  # the will of an earlier session, delivered late: this one lives on
            if found is not None:
                node = found
                self.feed.stale(sorted(set().union(*node.sources.values())) if node.sources else [])
                node.born = False
            return False
        if found is None or not found.born:
            self.feed.error(f"Sparkplug {kind} from {topic.group}/{topic.node} before its NBIRTH; rebirth requested")
            return True
        node = found
        rebirth = self._check_seq(node, message)
        if kind == "DBIRTH":
            node.sources[topic.device] = set()
            self._birth(node, topic, message, received_at)
        elif kind == "DDEATH":
            self.feed.stale(sorted(node.sources.get(topic.device, ())))
        elif kind in ("NDATA", "DDATA"):
            self._data(node, topic, message, received_at)
        return rebirth

    def _check_seq(self, node: EdgeNode, message: Any) -> bool:
        if not message.HasField("seq"):
            return False
        expected = None if node.seq is None else (node.seq + 1) % 256
        node.seq = message.seq
        if expected is not None and message.seq != expected:
            self.seq_gaps += 1
            self.feed.error(f"Sparkplug sequence gap: expected {expected}, got {message.seq}; rebirth requested")
            return True
        return False

    def _birth(self, node: EdgeNode, topic: SparkplugTopic, message: Any, received_at: datetime) -> None:
        sources = node.sources.setdefault(topic.device, set())
        room = self.max_node_metrics - len(node.aliases) - sum(len(known) for known in node.sources.values())
        for metric in message.metrics:
            if not metric.name:
                continue
            source = topic.source(metric.name)
            alias = metric.alias if metric.HasField("alias") else None
            cost = (source not in sources) + (alias is not None and alias not in node.aliases)
            if cost > room:
                self.feed.error(f"Sparkplug {topic.group}/{topic.node}: more than {self.max_node_metrics} metrics")
                break
            room -= cost
            sources.add(source)
            if alias is not None:
                node.aliases[alias] = source
        self._data(node, topic, message, received_at)

    def _data(self, node: EdgeNode, topic: SparkplugTopic, message: Any, received_at: datetime) -> None:
        """Every measurement of one message, handed to the feed in one call (a DDATA carries
        hundreds of metrics: per-metric work here is what a plant-size connector spends its time on)."""
        default_ms = message.timestamp if message.HasField("timestamp") else None
        times: dict[int, datetime] = {}  # the metrics of a message share a timestamp or a few
        aliases = node.aliases
        rows: list[tuple[str, datetime, float]] = []
        append = rows.append
        for metric in message.metrics:
            name = metric.name
            if name:
                if name == BD_SEQ_METRIC or name.startswith(CONTROL_PREFIXES):
                    continue  # protocol metadata, not a measurement
                source = topic.source(name)
            else:
                alias = metric.alias  # 0 when absent: HasField (slow) only then
                known = aliases.get(alias) if alias or metric.HasField("alias") else None
                if known is None:
                    self.feed.error(f"Sparkplug metric alias {metric.alias} was not announced in a birth")
                    continue
                source = known
            kind = metric.WhichOneof("value")
            if kind is None or kind in TEXT_VALUES or metric.is_null:
                continue
            value = float(getattr(metric, kind))
            ms = metric.timestamp  # 0 when absent, as above
            if not ms and not metric.HasField("timestamp"):
                ms = default_ms
            time = received_at if ms is None else times.get(ms)
            if time is None:
                try:
                    time = times[ms] = datetime.fromtimestamp(ms / 1000.0, UTC)
                except (OverflowError, OSError, ValueError):
                    time = None
            if time is None or not value_in_range(value):
                self.feed.sourced_samples(rows)  # what came before it in the message is kept
                problem = "timestamp out of range" if time is None else f"value {VALUE_RANGE}"
                raise PayloadError(f"metric {name or metric.alias}: {problem}")
            append((source, time, value))
        self.feed.sourced_samples(rows)


def rebirth_request(timestamp_ms: int) -> bytes:
    """An NCMD payload asking an edge node to send its births again."""
    message = Payload(timestamp=timestamp_ms)
    message.metrics.add(name=REBIRTH_METRIC, timestamp=timestamp_ms, datatype=11, boolean_value=True)
    return message.SerializeToString()
