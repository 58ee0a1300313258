"""Draft tests per type. Tool code and stdio MCP servers run only in the sandbox (core.sandbox,
refused when isolation is unavailable); other types are checked in-process."""

from __future__ import annotations

from typing import Any

from assistant.choices import DraftType
from assistant.conf import AssistantConfig
from assistant.models import Draft
from assistant.schema_checks import instance_checker, instance_problems
from assistant.validators import TEMPLATE_VARIABLE, validate_spec
from core.sandbox import Limits, SandboxUnavailable, isolation_status, run_tool, unisolated_allowed


def sandbox_limits(config: AssistantConfig) -> Limits:
    return Limits(
        cpu_seconds=config.sandbox_cpu_seconds,
        memory_mb=config.sandbox_memory_mb,
        fsize_mb=config.sandbox_fsize_mb,
        nofile=config.sandbox_nofile,
        wall_seconds=config.sandbox_wall_seconds,
    )


def render_prompt(text: str, variables: dict[str, Any]) -> str:
    return TEMPLATE_VARIABLE.sub(lambda m: str(variables.get(m.group(1), m.group(0))), text)


def run_draft_tests(draft: Draft, config: AssistantConfig) -> dict[str, Any]:
    """{ok, cases: [{name, ok, reason, error, output?}]}; the spec is re-validated first."""
    validation = validate_spec(draft.type, draft.name, draft.spec, config)
    if not validation["ok"]:
        return {"ok": False, "cases": [], "error": "; ".join(validation["errors"])}
    spec = draft.spec
    cases: list[dict[str, Any]] = []
    if draft.type == DraftType.TOOL:
        schema = instance_checker(spec.get("input_schema", {"type": "object"}))  # fetches nothing, no regexes
        limits = sandbox_limits(config)
        tests = spec.get("tests") or []
        if not tests:
            return {"ok": False, "cases": [], "error": "A tool needs at least one test case."}
        for index, test in enumerate(tests, 1):
            name = str(test.get("name") or f"case {index}")
            problems = instance_problems(schema, test.get("input"))
            if problems:
                cases.append({"name": name, "ok": False, "reason": "invalid input", "error": problems[0]})
                continue
            result = run_tool(spec["source"], spec.get("entrypoint") or "run", test["input"], limits=limits)
            case = {"name": name, "ok": result.ok, "reason": result.reason, "error": result.error}
            case["output"], case["duration_ms"] = result.output, result.duration_ms
            if result.warning:
                case["warning"] = result.warning
            if result.ok and "expect" in test and result.output != test["expect"]:
                case.update(ok=False, reason="unexpected output", error=f"expected {test['expect']!r}")
            cases.append(case)
    elif draft.type == DraftType.PROMPT:
        declared = spec.get("variables", [])
        for index, test in enumerate(spec.get("tests") or [{"variables": {v: f"<{v}>" for v in declared}}], 1):
            values = test.get("variables", {})
            rendered = render_prompt(spec["text"], values)
            missing = sorted(set(TEMPLATE_VARIABLE.findall(rendered)))
            expected = [s for s in test.get("expect_contains", []) if s not in rendered]
            ok = not missing and not expected
            error = f"unfilled: {missing}" if missing else (f"missing text: {expected}" if expected else "")
            cases.append({"name": f"render {index}", "ok": ok, "reason": "" if ok else "render", "error": error})
    elif draft.type == DraftType.MCP_SERVER:
        return _test_mcp_server(spec, config)
    else:
        # Skills and workflows carry no code to run here: the re-validation is the test.
        cases.append({"name": "re-validate", "ok": True, "reason": "", "error": ""})
    return {"ok": all(c["ok"] for c in cases), "cases": cases}


def _test_mcp_server(spec: dict[str, Any], config: AssistantConfig) -> dict[str, Any]:
    """Connect, list the tools, and check every declared tool is served."""
    from assistant.mcp_bridge import (  # local: a module-level import fails (import cycle / app registry)
        McpHostRefused,
        list_server_tools,
    )

    try:
        discovered = list_server_tools(spec, timeout=config.sandbox_wall_seconds * 3)
    except (SandboxUnavailable, McpHostRefused) as exc:  # refused before anything ran or connected
        return {"ok": False, "cases": [{"name": "connect", "ok": False, "reason": exc.reason, "error": str(exc)}]}
    except BaseException as exc:  # connection refused, bad command, timeout, protocol error
        if isinstance(exc, KeyboardInterrupt):
            raise
        case = {
            "name": "connect",
            "ok": False,
            "reason": "connection failed",
            "error": f"{type(exc).__name__}: {exc}"[:500],
        }
        return {"ok": False, "cases": [case]}
    served = {t["name"] for t in discovered}
    cases = [{"name": "connect", "ok": True, "reason": "", "error": f"{len(served)} tool(s) served"}]
    if spec.get("transport") == "stdio" and not isolation_status().available and unisolated_allowed():
        cases[0]["warning"] = "UNISOLATED: the server ran on the host (ARIA_SANDBOX_ALLOW_UNISOLATED)"
    for tool in spec.get("tools") or []:
        ok = tool.get("name") in served
        cases.append({"name": f"tool {tool.get('name')}", "ok": ok, "reason": "" if ok else "not served", "error": ""})
    return {"ok": all(c["ok"] for c in cases), "cases": cases, "discovered": discovered}
