"""Per-type draft validators: a registry keyed by draft type. Each returns a list of errors."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import ValidationError

from assistant.choices import DraftType, SkillRuntimeMode
from assistant.conf import AssistantConfig
from assistant.models.drafts import DRAFT_NAME_MAX_LENGTH
from assistant.schema_checks import schema_problems
from core.capabilities import registry

Validator = Callable[[str, dict[str, Any], AssistantConfig], list[str]]
_validators: dict[str, Validator] = {}
TEMPLATE_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
PLACEHOLDER = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")
NAME = re.compile(r"^[a-z][a-z0-9_]{1,62}$")
# Every other draft's name (skill, prompt, workflow, MCP server) is a path segment
# (PUT /sessions/{id}/skills/{name}), listed in every session and written to audit rows: a slug,
# never "../../x" or markup. Tools keep the stricter NAME (they become function names).
DRAFT_NAME = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_-]{{0,{DRAFT_NAME_MAX_LENGTH - 1}}}$")  # the column's length
DRAFT_NAME_RULE = (
    f"name must be letters, digits, _ or - (starting with a letter or digit), 1–{DRAFT_NAME_MAX_LENGTH} characters."
)
# A tool's test cases run one after another in the sandbox, each up to the wall timeout: a bound
# keeps one test request (and the draft's `testing` step) from running for hours.
MAX_TOOL_TESTS = 20
MCP_TRANSPORTS = ("stdio", "http", "streamable_http", "sse")
MCP_TIERS = ("read", "safe", "mutate")  # `gated` is never given to a model
# The finish tool each agent's loop ends with (their AgentSpec.finish_tool; a test keeps them in step):
# a published prompt for one of them must keep naming it.
AGENT_FINISH_TOOLS = {
    "investigator": "submit_rca",
    "work_order_generator": "submit_work_order",
    "shift_handover": "submit_handover",
    "kb_builder": "submit_kb_answer",
    "planner": "submit_plan",
    "coordinator": "submit_action_plan",
    "draft_reviewer": "submit_review",
    "authoring_assistant": "submit_turn",
}
# "ignore the instructions above", "replace the system prompt", "forget your rules" …
CONTRACT_OVERRIDE = re.compile(
    r"\b(ignore|disregard|forget|override|overrides|replace|replaces|drop|discard)\b[^.\n]{0,40}?"
    r"(\b(previous|above|prior|earlier|built-?in|system|default|original|your|all|other)\b[^.\n]{0,20}?"
    r"\b(instructions?|prompts?|rules|contract|method)\b"
    r"|\b(instructions?|prompts?|rules|contract|method)\s+(above|before|earlier|you were given)\b)",
    re.IGNORECASE,
)
# "do not call submit_rca", "never use tools", "answer without calling the finish tool" …
FINISH_NEGATION = re.compile(
    r"\b(do not|don't|dont|never|no need to|without|avoid|instead of|stop)\s+(\w+\s+){0,3}?"
    r"(call|calling|use|using|invoke|invoking|submit|submitting)\b[^.\n]{0,20}?"
    r"(\bsubmit_\w+|\bfinish(ing)? tool|\b(any|the|your) tools\b|\bfunction calls?\b)"
    r"|\b(skip|omit|avoid)\s+(the\s+)?(submit_\w+|finish tool)",
    re.IGNORECASE,
)


def validator(draft_type: str) -> Callable[[Validator], Validator]:
    def decorate(fn: Validator) -> Validator:
        _validators[draft_type] = fn
        return fn

    return decorate


def validate_spec(draft_type: str, name: str, spec: dict[str, Any], config: AssistantConfig) -> dict[str, Any]:
    """The validation report: {ok, errors, type}."""
    check = _validators.get(draft_type)
    errors = [f"No validator for draft type {draft_type!r}."] if check is None else check(name, spec, config)
    return {"ok": not errors, "errors": errors, "type": draft_type}


def draft_name_errors(name: str) -> list[str]:
    """The slug rule for a skill's, prompt's, workflow's or MCP server's name (see DRAFT_NAME)."""
    if not name.strip():
        return ["name is required."]
    return [] if DRAFT_NAME.match(name) else [DRAFT_NAME_RULE]


def _schema_errors(schema: Any, field: str = "input_schema") -> list[str]:
    if not isinstance(schema, dict):
        return [f"{field} must be a JSON Schema object."]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [f"{field} is not a valid JSON Schema: {exc.message}"]
    if schema.get("type", "object") != "object":
        return [f"{field} must describe an object."]
    return schema_problems(schema, field)


@validator(DraftType.TOOL)
def validate_tool(name: str, spec: dict[str, Any], config: AssistantConfig) -> list[str]:
    errors = [] if NAME.match(name) else ["name must be snake_case (a-z, 0-9, _), 2–63 characters."]
    source, entrypoint = spec.get("source"), spec.get("entrypoint") or "run"
    if not isinstance(source, str) or not source.strip():
        return [*errors, "source (Python code) is required."]
    if len(source.encode()) > config.tool_source_max_bytes:
        errors.append(f"source is larger than tool_source_max_bytes ({config.tool_source_max_bytes}).")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [*errors, f"source does not parse: line {exc.lineno}: {exc.msg}"]
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if entrypoint not in defined:
        errors.append(f"source does not define the entrypoint function {entrypoint!r}.")
    errors += _schema_errors(spec.get("input_schema", {"type": "object"}))
    tests = spec.get("tests", [])
    if not isinstance(tests, list) or any(not isinstance(t, dict) or "input" not in t for t in tests):
        errors.append("tests must be a list of {input, expect?}.")
    elif len(tests) > MAX_TOOL_TESTS:
        errors.append(f"tests: at most {MAX_TOOL_TESTS} cases (this spec has {len(tests)}).")
    return errors


@validator(DraftType.PROMPT)
def validate_prompt(name: str, spec: dict[str, Any], config: AssistantConfig) -> list[str]:
    text, declared = spec.get("text"), spec.get("variables", [])
    errors = draft_name_errors(name)
    if not isinstance(text, str) or not text.strip():
        return [*errors, "text is required."]
    if not isinstance(declared, list) or not all(isinstance(v, str) for v in declared):
        return [*errors, "variables must be a list of names."]
    used = set(TEMPLATE_VARIABLE.findall(text))
    errors += [f"template variable {{{{{v}}}}} is not declared." for v in sorted(used - set(declared))]
    return errors + prompt_contract_errors(str(spec.get("agent") or name), text)


def prompt_contract_errors(agent: str, text: str) -> list[str]:
    """A published prompt adds to the agent's built-in contract; text that would remove it is refused."""
    errors = []
    override = CONTRACT_OVERRIDE.search(text)
    if override:
        errors.append(
            f"text would remove the agent's built-in contract ({override.group(0)!r}): a published prompt "
            "adds site instructions to the built-in prompt, it cannot replace it."
        )
    negation = FINISH_NEGATION.search(text)
    if negation:
        errors.append(f"text would stop the agent from using its tools or finish tool ({negation.group(0)!r}).")
    finish = AGENT_FINISH_TOOLS.get(agent)
    if finish and finish not in text:
        errors.append(f'text must keep the finish instruction: name {finish} (e.g. "Finish by calling {finish}.").')
    return errors


@validator(DraftType.SKILL)
def validate_skill(name: str, spec: dict[str, Any], config: AssistantConfig) -> list[str]:
    errors = draft_name_errors(name)
    if not isinstance(spec.get("instructions"), str) or not spec["instructions"].strip():
        errors.append("instructions are required.")
    if spec.get("runtime_mode", SkillRuntimeMode.AUTO) not in SkillRuntimeMode.values:
        errors.append(f"runtime_mode must be one of {SkillRuntimeMode.values}.")
    triggers = spec.get("triggers", [])
    if not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
        errors.append("triggers must be a list of strings.")
    return errors


@validator(DraftType.WORKFLOW)
def validate_workflow(name: str, spec: dict[str, Any], config: AssistantConfig) -> list[str]:
    steps = spec.get("steps")
    errors = draft_name_errors(name)
    if not isinstance(steps, list) or not steps:
        return [*errors, "steps must be a non-empty list."]
    for index, step in enumerate(steps, 1):
        if not isinstance(step, dict):
            errors.append(f"step {index} must be an object.")
            continue
        cap = registry.get(str(step.get("capability", "")))
        if cap is None:
            errors.append(f"step {index}: unknown capability {step.get('capability')!r}.")
            continue
        try:
            cap.input.model_validate(step.get("inputs") or {})
        except ValidationError as exc:
            # `{placeholder}` strings are filled from the plan's context later.
            real = [e for e in exc.errors() if not (isinstance(e.get("input"), str) and PLACEHOLDER.match(e["input"]))]
            if not real:
                continue
            first = real[0]
            errors.append(f"step {index} ({cap.name}): {'.'.join(map(str, first['loc']))}: {first['msg']}")
    return errors


@validator(DraftType.MCP_SERVER)
def validate_mcp_server(name: str, spec: dict[str, Any], config: AssistantConfig) -> list[str]:
    transport = spec.get("transport")
    errors = draft_name_errors(name)
    if transport not in MCP_TRANSPORTS:
        return [*errors, f"transport must be one of {MCP_TRANSPORTS}."]
    if transport == "stdio":
        command = spec.get("command")
        if not (isinstance(command, str) and command.strip()) and not (
            isinstance(command, list) and command and all(isinstance(c, str) and c for c in command)
        ):
            errors.append("stdio transport needs a command (string or list of strings).")
    else:
        url = urlparse(str(spec.get("url", "")))
        if url.scheme not in ("http", "https") or not url.netloc:
            errors.append("url must be an http(s) URL.")
    for index, tool in enumerate(spec.get("tools", []) or [], 1):
        if not isinstance(tool, dict) or not NAME.match(str(tool.get("name", ""))):
            errors.append(f"tool {index}: name must be snake_case.")
        else:
            errors += _schema_errors(tool.get("input_schema", {"type": "object"}), f"tool {index} input_schema")
            if tool.get("tier", "mutate") not in MCP_TIERS:
                errors.append(f"tool {index}: tier must be one of {MCP_TIERS} (default mutate).")
    return errors
