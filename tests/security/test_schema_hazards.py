"""A tool's JSON Schema is applied in ARIA's own process, outside the sandbox. A `$ref` to a URL made
the server fetch it (jsonschema retrieves remote references by default) and a `pattern` made it
match an author's regex against text an author or a model chose (`^(a+)+$` against 28 characters
froze every request of the dev server for 12 s: Python's re holds the GIL). An authored schema with
either fails validation naming where; a schema served or published before is applied without them:
nothing is fetched, no regex is matched."""

import http.server
import os
import threading

import pytest

from assistant.models import Draft, PublishedArtifact
from assistant.publishers import register_published_tool
from assistant.schema_checks import instance_checker, instance_problems
from core.capabilities import CapabilityContext, dispatch, registry
from core.sandbox import isolation_status
from tests.assistant.factories import TOOL_SPEC

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
CATASTROPHIC = "^(a+)+$"


@pytest.fixture
def listener():
    """A local HTTP server that records every path asked of it (it answers a valid schema)."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.asked = asked
    server.url = f"http://127.0.0.1:{server.server_port}/schema.json"
    yield server
    server.shutdown()


def schema_with(prop: dict) -> dict:
    return {"type": "object", "properties": {"s": prop}, "required": ["s"]}


def validate(client, spec: dict) -> dict:
    did = client.post(
        f"{API}/drafts", {"type": "tool", "name": "fetcher", "spec": spec}, content_type="application/json"
    ).json()["id"]
    return client.post(f"{API}/drafts/{did}/validate").json()


def test_an_authored_remote_ref_fails_validation_and_is_never_fetched(client, operator, listener):
    client.force_login(operator)
    spec = {**TOOL_SPEC, "input_schema": schema_with({"$ref": listener.url}), "tests": [{"input": {"s": 1}}]}
    report = validate(client, spec)
    assert report["status"] == "validation_failed"
    assert any("input_schema.properties.s.$ref" in e for e in report["validation_report"]["errors"])
    assert listener.asked == []


def test_an_authored_pattern_fails_validation_naming_where(client, operator):
    client.force_login(operator)
    spec = {**TOOL_SPEC, "input_schema": schema_with({"type": "string", "pattern": CATASTROPHIC})}
    report = validate(client, spec)
    assert report["status"] == "validation_failed"
    assert any("input_schema.properties.s.pattern" in e for e in report["validation_report"]["errors"])
    # a property that is merely *named* pattern is fine
    named = {**TOOL_SPEC, "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}}}
    assert validate(client, named)["status"] == "validated"


def test_a_served_schema_is_applied_without_fetching_or_matching_regexes(listener):
    served = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "pattern": CATASTROPHIC},
            "t": {"$ref": listener.url},
            "n": {"$ref": "#/$defs/count"},
        },
        "patternProperties": {"^(x+)+$": {"type": "integer"}},
        "additionalProperties": False,
        "$defs": {"count": {"type": "integer"}},
    }
    checker = instance_checker(served)
    assert instance_problems(checker, {"s": "a" * 22 + "!", "t": 1, "n": 2, "xxx": 3}) == []
    assert instance_problems(checker, {"s": 5, "n": "two"}) == [
        "5 is not of type 'string'",
        "'two' is not of type 'integer'",
    ]
    assert listener.asked == []


def test_a_tool_published_before_runs_without_fetching_or_matching(operator, listener):
    if not isolation_status().available and os.environ.get("ARIA_REQUIRE_INTEGRATION") != "1":
        pytest.skip("sandbox unavailable")
    spec = {
        **TOOL_SPEC,
        "source": "def run(params):\n    return {'length': len(params['s'])}\n",
        "input_schema": {
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": CATASTROPHIC}, "t": {"$ref": listener.url}},
            "required": ["s"],
        },
    }
    draft = Draft.objects.create(owner=operator, type="tool", name="old_tool", spec=spec, status="published")
    artifact = PublishedArtifact.objects.create(type="tool", name="old_tool", version=1, spec=spec, draft=draft)
    register_published_tool(artifact)
    try:
        result = dispatch("old_tool", {"s": "a" * 22 + "!", "t": 7}, ctx=CapabilityContext(user=operator))
        assert not result.is_error, result.message
        assert result.content == {"length": 23}
        bad = dispatch("old_tool", {"s": 3}, ctx=CapabilityContext(user=operator))
        assert bad.is_error and "Invalid input" in bad.message  # the shape is still checked
        assert listener.asked == []
    finally:
        registry.unregister("published.old_tool")
