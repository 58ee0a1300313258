"""A connector's message rate: messages counted over a sliding window of the last 30 s.

The supervisor drains a session every 0.5 s and used to divide the messages of a ~1 s window by
its length, reset after each ingest: a window held two or three drains, so a steady 14 msg/s
showed as 9.4 or 18.5 depending on which drains fell in it. Over 30 s one drain more or less
moves the figure by a few per cent, and the rate is measured from the drain that opens the window
to the newest one, so a steady flow reads its real rate. The clock is the caller's (monotonic
seconds), so a test feeds counts at known times.
"""

from __future__ import annotations

from collections import deque

RATE_WINDOW_SECONDS = 30.0
MIN_SPAN_SECONDS = 1.0  # just after a start: no rate from a fraction of a second
RATE_DECIMALS = 2


def rate_rounded(rate: float) -> float:
    """The rate as stored, published and shown: 2 decimals (14.0, 0.03)."""
    return round(rate, RATE_DECIMALS)


def rate_shown(rate: float) -> str:
    return str(rate_rounded(rate))


class RateMeter:
    """Messages per second over the last `window` seconds of `add(count, now)` calls."""

    def __init__(self, now: float, *, window: float = RATE_WINDOW_SECONDS) -> None:
        self.window = window
        # (time, messages received since the previous entry); the first entry only opens the span.
        self._counts: deque[tuple[float, int]] = deque([(now, 0)])
        self._total = 0  # messages of every entry but the first

    def add(self, count: int, now: float) -> float:
        """Record `count` messages received up to `now`; returns the rate, rounded."""
        self._counts.append((now, count))
        self._total += count
        # Keep the newest entry at or before now - window as the one that opens the span.
        while len(self._counts) > 2 and self._counts[1][0] <= now - self.window:
            self._counts.popleft()
            self._total -= self._counts[0][1]
        return self.rate()

    def rate(self) -> float:
        span = self._counts[-1][0] - self._counts[0][0]
        return rate_rounded(self._total / max(span, MIN_SPAN_SECONDS))
