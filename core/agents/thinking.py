"""The thinking stream on the bus: `thinking_delta {agent, content, turn_id}` while the model thinks.

Provider deltas arrive a few tokens at a time; each one as an outbox row would flood the bus, so a
run's deltas are coalesced: a delta is published once `interval` has passed since the last event
(else it waits in the buffer for the next one), and the end of a model turn publishes what is left,
so the thinking is on the bus before the tool calls it led to. No run ever publishes more than
`per_second` events in any one-second window (the end-of-turn flush waits for the window when it
would exceed it). The chat socket still gets every delta (the loop's `on_frame`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

Publish = Callable[[str, dict[str, Any]], Any]

MAX_EVENTS_PER_SECOND = 10


class ThinkingStream:
    def __init__(
        self,
        *,
        agent: str,
        turn_id: str,
        publish: Publish,
        per_second: int = MAX_EVENTS_PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.agent = agent
        self.turn_id = turn_id
        self._publish = publish
        self.per_second = per_second
        self.interval = 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._buffer: list[str] = []
        self._sent: deque[float] = deque(maxlen=per_second)  # times of the last `per_second` events
        self.events = 0

    def add(self, content: str) -> None:
        """A delta from the model: published now if the last event is `interval` old, else buffered."""
        if not content:
            return
        self._buffer.append(content)
        now = self._clock()
        if not self._sent or now - self._sent[-1] >= self.interval:
            if self._window_allows(now):
                self._emit(now)

    def flush(self) -> None:
        """The model turn ended: publish the rest, keeping to `per_second` in any one-second window."""
        if not self._buffer:
            return
        now = self._clock()
        if not self._window_allows(now):
            self._sleep(max(0.0, 1.0 - (now - self._sent[0])))
            now = self._clock()
        self._emit(now)

    def _window_allows(self, now: float) -> bool:
        return len(self._sent) < self.per_second or now - self._sent[0] >= 1.0

    def _emit(self, now: float) -> None:
        content = "".join(self._buffer)
        self._buffer.clear()
        self._publish("thinking_delta", {"agent": self.agent, "content": content, "turn_id": self.turn_id})
        self._sent.append(now)
        self.events += 1
