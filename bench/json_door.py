#!/usr/bin/env python
"""What a hostile /api/ JSON body costs an anonymous client's target, before and after authentication.

    .venv/bin/python bench/json_door.py [--repeat 3]

For each body shape (about 2 MB, the largest the door lets in), the best of --repeat runs of:
`door_ms`, the request-limits middleware's checks (core.request_limits.api_body_refusal: what every
client, signed in or not, costs the server); `after_auth_ms`, the checks that parse the body
(core.json_body.json_body_refusal), which run only once the caller is authenticated; and
`json_loads_ms`, one plain json.loads of the body for scale. Before the change the door ran both.
No database: the door and the checks are plain functions. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

import django

django.setup()

from django.test import RequestFactory  # noqa: E402

from core.json_body import json_body_refusal  # noqa: E402
from core.request_limits import api_body_refusal  # noqa: E402

SIZE = 2 * 1024 * 1024 - 64


def _fill(head: str, item: str, tail: str) -> bytes:
    count = (SIZE - len(head) - len(tail)) // (len(item) + 1)
    return (head + ",".join([item] * count) + tail).encode()


SHAPES = {
    "nested_small_lists_repeat_at_end": _fill('{"a": [', "[[1],[2]]", '], "b": {"k": 1, "k": 2}}'),
    "empty_objects_nan_at_end": _fill('{"a": [', "{}", '], "b": NaN}'),
    "small_objects_nul_at_end": _fill('{"a": [', '{"x":1}', '], "b": "\\u0000"}'),
    "sound_ingest_like": _fill(
        '{"samples": [', '{"signal_id": 1, "time": "2026-12-03T10:00:00+00:00", "value": 1.5}', "]}"
    ),
}


def best_ms(func: Callable[[Any], object], repeat: int, setup: Callable[[], Any]) -> float:
    runs = []
    for _ in range(repeat):
        arg = setup()  # outside the clock: e.g. building the request
        start = time.perf_counter()
        func(arg)
        runs.append(time.perf_counter() - start)
    return round(min(runs) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    factory = RequestFactory()
    results = {}
    for name, body in SHAPES.items():

        def request(body: bytes = body) -> Any:
            return factory.post("/api/v1/workorders/1/transition", body, "application/json")

        refusal = json_body_refusal(body)
        results[name] = {
            "bytes": len(body),
            "door_ms": best_ms(api_body_refusal, args.repeat, request),
            "door_answer": api_body_refusal(request()),  # None: on to authentication
            "after_auth_ms": best_ms(json_body_refusal, args.repeat, lambda body=body: body),
            "after_auth_answer": refusal.as_body() if refusal is not None else None,
            "json_loads_ms": best_ms(json.loads, args.repeat, lambda body=body: body),
        }
    print(json.dumps({"repeat": args.repeat, "loadavg": os.getloadavg(), "shapes": results}, indent=2))


if __name__ == "__main__":
    main()
