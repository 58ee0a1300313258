"""The repeated-key / non-finite check (core.json_keys) runs on every /api/ body (after authentication
since test_json_checks_after_auth), so its slow walk must not be the cheap way to burn the server's CPU.

Before, any body spelling one colon as `\\u003a` — no repeat, no bad number — skipped the counting
fast path and was walked in Python: a list-subclass hook per object and a path string per value
made a 2 MB body of empty objects cost ~3 s against ~60 ms for json.loads (measured, not asserted
here). Now the fast path counts such escapes exactly, and the walk (still taken when the body holds
a problem) visits only containers and non-finite numbers; the answers are the same."""

from __future__ import annotations

import json

import pytest

from core.json_keys import json_body_problem


@pytest.fixture
def parses(monkeypatch) -> list[bytes]:
    """The bodies json.loads is asked to read (the slow walk's parse; the fast path is msgspec's)."""
    seen: list[bytes] = []
    loads = json.loads

    def spy(body, *args, **kwargs):
        seen.append(body)
        return loads(body, *args, **kwargs)

    monkeypatch.setattr(json, "loads", spy)
    return seen


def test_an_escaped_colon_in_a_sound_body_keeps_the_fast_path(parses):
    samples = ",".join(f'{{"signal_id": {i}, "time": "2026-12-03T10:00:00Z", "value": 1.5}}' for i in range(5000))
    body = f'{{"note": "shift 10\\u003a30", "samples": [{samples}]}}'.encode()

    assert json_body_problem(body) is None
    assert parses == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (rb'{"a": "\u003a", "a": 1}', "a"),
        (rb'{"a": "\\u003a", "a": 1}', "a"),  # an escaped backslash, then text: no colon
        (rb'{"a": "\\\u003a", "a": 1}', "a"),  # an escaped backslash, then an escaped colon
        (rb'{"\u003a": 1, "\u003A": 2}', ":"),
        (rb'{"x": {"k\u003a": 1, "k:": 2}, "y": "\\\\u003a"}', "x.k:"),
    ],
)
def test_a_repeat_beside_escaped_colons_is_still_found(body, field):
    problem = json_body_problem(body)
    assert problem is not None and (problem.kind, problem.field) == ("duplicate_key", field)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[" + "[[1]]," * 3000 + '{"a": 1, "a": 2}]', ("duplicate_key", "3000.a", "a")),
        ("[" + "{}," * 3000 + '{"b": [{"a": 1.5}, {"c": [NaN]}]}]', ("non_finite", "3000.b.1.c.0", "NaN")),
        ('{"a": [' + "1.5," * 3000 + '-1e999], "a": 1}', ("duplicate_key", "a", "a")),  # the object's own first
        ('{"s": [' + '"x",' * 3000 + '{"t": [[], {}, Infinity]}]}', ("non_finite", "s.3000.t.2", "Infinity")),
    ],
)
def test_the_walk_names_the_first_problem_in_a_large_body(body, expected):
    problem = json_body_problem(body.encode())
    assert problem is not None and (problem.kind, problem.field, problem.token) == expected
