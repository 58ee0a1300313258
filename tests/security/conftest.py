"""Fixtures shared by the security tests."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest


@pytest.fixture
def parsed(monkeypatch) -> list[bytes]:
    """Every text handed to json.loads or msgspec's decoder (the body checks' two parsers) while
    the test runs: a test asserts a body was never parsed by finding it absent."""
    seen: list[bytes] = []
    loads, decode = json.loads, msgspec.json.decode

    def spy_loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(text if isinstance(text, bytes) else str(text).encode())
        return loads(text, *args, **kwargs)

    def spy_decode(body: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(bytes(body))
        return decode(body, *args, **kwargs)

    monkeypatch.setattr(json, "loads", spy_loads)
    monkeypatch.setattr(msgspec.json, "decode", spy_decode)
    return seen
