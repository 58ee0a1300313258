"""The thinking stream's coalescing, on a simulated clock: at most 10 bus events per second per run."""

from core.agents.thinking import ThinkingStream


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def stream(clock: Clock, published: list) -> ThinkingStream:
    return ThinkingStream(
        agent="investigator",
        turn_id="t-1",
        publish=lambda kind, payload: published.append((kind, payload)),
        clock=clock,
        sleep=clock.sleep,
    )


def test_deltas_closer_than_100_ms_are_coalesced_and_nothing_is_lost():
    clock, published = Clock(), []
    thinking = stream(clock, published)
    for i in range(100):  # 100 deltas, 10 ms apart: one second of thinking
        thinking.add(f"{i},")
        clock.now += 0.01
    thinking.flush()
    assert len(published) <= 11  # one per 100 ms, plus the end of the turn
    assert all(kind == "thinking_delta" for kind, _ in published)
    assert all(set(p) == {"agent", "content", "turn_id"} for _, p in published)
    assert "".join(p["content"] for _, p in published) == "".join(f"{i}," for i in range(100))
    assert published[0][1] == {"agent": "investigator", "content": "0,", "turn_id": "t-1"}  # the first is live


def test_slow_deltas_each_go_out_at_once():
    clock, published = Clock(), []
    thinking = stream(clock, published)
    for word in ("Bearing ", "temperature ", "rises."):
        thinking.add(word)
        clock.now += 0.25
    thinking.flush()  # nothing left over
    assert [p["content"] for _, p in published] == ["Bearing ", "temperature ", "rises."]
    assert clock.slept == []


def test_no_one_second_window_ever_holds_more_than_10_events():
    clock, published = Clock(), []
    times: list[float] = []
    thinking = ThinkingStream(
        agent="a", turn_id="t", publish=lambda kind, payload: times.append(clock.now), clock=clock, sleep=clock.sleep
    )
    for _turn in range(30):  # many short model turns: a streamed delta, then the end-of-turn flush
        thinking.add("x")
        clock.now += 0.02
        thinking.add("y")
        thinking.flush()
        clock.now += 0.01
    assert len(times) >= 30  # every turn's thinking is out before the turn ends
    assert all(later - earlier >= 1.0 - 1e-9 for earlier, later in zip(times, times[10:], strict=False))
    assert clock.slept  # the flush waited for the window instead of exceeding it
    assert published == []
