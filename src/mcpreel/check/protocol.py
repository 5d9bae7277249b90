"""Checks of the three methods every tool server answers: ``initialize`` (and version negotiation), ``tools/list``
(and every tool's schema), ``tools/call`` of each tool (spec 05 parts 3, 4 and 5)."""

from __future__ import annotations

import re
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.check.context import FAIL, PASS, SKIP, WARN, Run, check, result
from mcpreel.check.probe import ProbeExchange, Unreachable, excerpt
from mcpreel.check.result import CheckResult
from mcpreel.check.schema_args import argument_problem, example_arguments, schema_problem
from mcpreel.operations.facts import tool_result

TOOLS_NOT_FOUND = "Tools Not Found"
INVALID_JSON = "Invalid JSON in Response"
_RANK = {PASS: 0, SKIP: 0, WARN: 1, FAIL: 2}
#: content types a tools/call result may carry (MCP 2025-11-25)
CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
MAX_TOOL_PAGES = 50


def initialize_params(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "mcpreel-check", "version": __version__}}


def _error_text(resp: dict[str, Any]) -> str:
    err = resp.get("error")
    if isinstance(err, dict):
        return f"error {err.get('code')}: {err.get('message')}"
    return f"error {excerpt(err, 120)}"


def _no_answer(ex: ProbeExchange, what: str) -> str:
    if ex.error:
        return f"no response to {what}: {ex.error}"
    if ex.status is not None and not ex.ok_status:
        return f"{what} answered HTTP {ex.status} without a JSON-RPC response"
    others = [m for m in ex.messages if isinstance(m, dict) and "id" in m and "method" not in m]
    if others:
        return f"no response with id {ex.request_id!r} to {what} (got id {others[0].get('id')!r})"
    return f"no JSON-RPC response to {what}"


# -- initialize ------------------------------------------------------------------------------------


@check("initialize", "initialize: protocolVersion, capabilities.tools, serverInfo{name,version}", 3, needs=(),
       handshake=True)
def initialize(run: Run) -> CheckResult:
    ex = run.init
    assert ex is not None
    resp = ex.response
    if resp is None:
        return result(initialize, FAIL, _no_answer(ex, "initialize"), ex=ex,
                      fix="answer initialize with a JSON-RPC result carrying the same id")
    if "error" in resp:
        return result(initialize, FAIL, f"initialize answered {_error_text(resp)}", ex=ex,
                      fix='answer initialize with a result: {"protocolVersion": ..., "capabilities": {"tools": {}}, '
                          '"serverInfo": {"name": ..., "version": ...}}')
    res = resp.get("result")
    if not isinstance(res, dict):
        return result(initialize, FAIL, "initialize result is not an object", ex=ex)
    problems: list[tuple[str, str]] = []
    pv = res.get("protocolVersion")
    if not isinstance(pv, str) or not pv:
        problems.append((FAIL, "result.protocolVersion is missing or not a string"))
    caps = res.get("capabilities")
    if not isinstance(caps, dict):
        problems.append((FAIL, "result.capabilities is missing or not an object"))
    elif not isinstance(caps.get("tools"), dict):
        problems.append((FAIL if run.strict_format else WARN,
                         "result.capabilities.tools is missing: the server declares no tools"))
    info = res.get("serverInfo")
    if not isinstance(info, dict):
        problems.append((FAIL, "result.serverInfo is missing or not an object"))
    else:
        if not isinstance(info.get("name"), str) or not info.get("name"):
            problems.append((FAIL, "serverInfo.name is missing or not a string"))
        version = info.get("version")
        if not isinstance(version, str):
            problems.append((FAIL, "serverInfo.version is missing or not a string"))
        elif not version:
            problems.append((WARN, "serverInfo.version is empty"))
    fix = ('answer {"protocolVersion": "<a version you support>", "capabilities": {"tools": {}}, '
           '"serverInfo": {"name": "...", "version": "1.0.0"}}')
    if not problems:
        assert isinstance(info, dict)  # else a problem says so
        return result(initialize, PASS, f"protocol {pv}, server {info.get('name')} {info.get('version')}")
    status = max((p[0] for p in problems), key=_RANK.__getitem__)
    return result(initialize, status, problems[0][1] if len(problems) == 1 else f"{len(problems)} problems: "
                  + "; ".join(p[1] for p in problems), ex=ex, fix=fix)


@check("version-negotiation", "Protocol version negotiated for an older and a newer client", 3, handshake=True)
def version_negotiation(run: Run) -> CheckResult:
    problems: list[tuple[str, str, ProbeExchange | None]] = []
    answers = []
    cases = (("2024-11-05", "older"), ("2099-01-01", "newer"))
    if run.http:
        exchanges = [_fresh_initialize(run, version) for version, _ in cases]
    else:
        # two new server processes: start them side by side, each start is mostly waiting
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(cases)) as pool:
            exchanges = list(pool.map(lambda case: _fresh_initialize(run, case[0]), cases))
    for (version, kind), ex in zip(cases, exchanges, strict=True):
        resp = ex.response
        if resp is None:
            problems.append((FAIL, _no_answer(ex, f"initialize at {version}"), ex))
            continue
        if "error" in resp:
            problems.append((FAIL, f"initialize at {version} ({kind} client) answered {_error_text(resp)}: a server "
                                   "must answer with a version it supports", ex))
            continue
        res = resp.get("result")
        if not isinstance(res, dict):
            res = {}
        got = res.get("protocolVersion")
        if not isinstance(got, str) or not got:
            problems.append((FAIL, f"initialize at {version} gave no protocolVersion", ex))
            continue
        run.versions_seen.add(got)
        answers.append(f"{version} -> {got}")
        if kind == "newer" and got == version:
            problems.append((FAIL, f"agreed to {version}, a version that does not exist: a server must answer with "
                                   "a version it supports", ex))
    fix = "answer initialize with the client's version when you support it, else with the latest version you support"
    if not problems:
        return result(version_negotiation, PASS, ", ".join(answers))
    status, summary, culprit = max(problems, key=lambda p: _RANK[p[0]])
    return result(version_negotiation, status, summary, ex=culprit, fix=fix,
                  details=[f"{s}: {t}" for s, t, _ in problems] if len(problems) > 1 else [])


def _fresh_initialize(run: Run, version: str) -> ProbeExchange:
    """``initialize`` on a new connection: a new HTTP session, or a new server process over stdio."""
    params = initialize_params(version)
    if run.http:
        probe = run.probe
        ex = probe.request("initialize", params, label=f"initialize at {version}", session=False,
                           drop_headers=("MCP-Protocol-Version",))
        ex.side = True
        sid = ex.headers.get("mcp-session-id")
        if sid and sid != run.session_id:
            run.extra_sessions.append(sid)
        return ex
    assert run.spawn is not None
    try:
        probe = run.spawn()
    except Unreachable as exc:
        return ProbeExchange(label=f"initialize at {version}", sent=jsonio.dumps(params), request_id=1, error=str(exc))
    with probe:
        ex = probe.request("initialize", params, label=f"initialize at {version}")
    ex.side = True
    return ex


# -- tools/list ------------------------------------------------------------------------------------


@check("tools-list", "tools/list returns tools[]", 4)
def tools_list(run: Run) -> CheckResult:
    caps = (run.init_result or {}).get("capabilities")
    declares = isinstance(caps, dict) and isinstance(caps.get("tools"), dict)
    tools: list[Any] = []
    cursor: Any = None
    ex: ProbeExchange | None = None
    fix = 'answer {"tools": [{"name": ..., "description": ..., "inputSchema": {"type": "object", ...}}]}'
    for _ in range(MAX_TOOL_PAGES):
        ex = run.probe.request("tools/list", {"cursor": cursor} if cursor is not None else None)
        resp = ex.response
        if resp is None:
            return result(tools_list, FAIL, _no_answer(ex, "tools/list"), ex=ex, fix=fix, issue=TOOLS_NOT_FOUND)
        if "error" in resp:
            err = resp.get("error")
            if not isinstance(err, dict):
                err = {}
            if err.get("code") == -32601 and not declares and not run.strict_format:
                run.tools = []
                return result(tools_list, SKIP, "the server has no tools (no tools capability, tools/list not found)")
            return result(tools_list, FAIL, f"tools/list answered {_error_text(resp)}", ex=ex, fix=fix,
                          issue=TOOLS_NOT_FOUND)
        res = resp.get("result")
        page = res.get("tools") if isinstance(res, dict) else None
        if not isinstance(page, list):
            where = "result.tools is missing" if isinstance(res, dict) and "tools" not in res else \
                "result.tools is not an array"
            return result(tools_list, FAIL, where, ex=ex, fix=fix, issue=TOOLS_NOT_FOUND)
        tools.extend(page)
        cursor = res.get("nextCursor") if isinstance(res, dict) else None
        if not isinstance(cursor, str) or not cursor:
            break
    bad = [t for t in tools if not isinstance(t, dict)]
    run.tools = [t for t in tools if isinstance(t, dict)]
    if bad:
        return result(tools_list, FAIL, f"{len(bad)} item(s) of tools[] are not objects: {excerpt(bad[0], 80)}",
                      ex=ex, fix=fix, issue=TOOLS_NOT_FOUND)
    if not tools:
        return result(tools_list, WARN, "tools/list returned no tools: nothing to call", ex=ex,
                      fix="register at least one tool")
    names = [str(t.get("name")) for t in run.tools]
    shown = ", ".join(names[:8]) + (f", … ({len(names)} in all)" if len(names) > 8 else "")
    return result(tools_list, PASS, f"{len(tools)} tool{'s' if len(tools) != 1 else ''}: {shown}")


@check("tool-schemas", "Each tool: name, description, inputSchema (object, properties, valid JSON Schema)", 4,
       needs=("init", "tools"))
def tool_schemas(run: Run) -> CheckResult:
    assert run.tools is not None
    if not run.tools:
        return result(tool_schemas, SKIP, "no tools to judge")
    problems: list[tuple[str, str, Any]] = []
    seen: set[str] = set()
    strict = run.strict_format
    for i, tool in enumerate(run.tools):
        name = tool.get("name")
        who = repr(name) if isinstance(name, str) else f"tools[{i}]"

        def add(status: str, text: str, tool: Any = tool, who: str = who) -> None:
            problems.append((status, f"{who}: {text}", tool))

        if not isinstance(name, str) or not name:
            add(FAIL, "name is missing or not a string")
        else:
            if name in seen:
                add(FAIL, "the name is used twice")
            seen.add(name)
            if not _TOOL_NAME.fullmatch(name):
                add(WARN, "name should be 1-128 of A-Z a-z 0-9 _ - .")
        desc = tool.get("description")
        if not isinstance(desc, str) or not desc.strip():
            add(FAIL if strict else WARN, "description is missing or empty")
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            add(FAIL, "inputSchema is missing or not an object")
            continue
        if schema.get("type") != "object":
            add(FAIL, f'inputSchema.type is {jsonio.dumps_str(schema.get("type")) if "type" in schema else "missing"}, '
                      'not "object"')
        props = schema.get("properties")
        if props is None:
            if strict:
                add(FAIL, "inputSchema has no properties")
        elif not isinstance(props, dict):
            add(FAIL, "inputSchema.properties is not an object")
        required = schema.get("required")
        if required is not None:
            if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
                add(FAIL, "inputSchema.required is not an array of names")
            else:
                declared = props if isinstance(props, dict) else {}
                undeclared = [r for r in required if r not in declared]
                if undeclared:
                    add(FAIL if strict else WARN,
                        f"inputSchema.required names {', '.join(map(repr, undeclared))}, not in properties")
        problem = schema_problem(schema)
        if problem:
            add(FAIL, f"inputSchema is not a valid JSON Schema {problem}")
    fix = ('give each tool "name", "description" and "inputSchema": {"type": "object", "properties": {...}, '
           '"required": [names declared in properties]}, a valid JSON Schema')
    if not problems:
        n = len(run.tools)
        return result(tool_schemas, PASS, f"{n} tool{'s' if n != 1 else ''}, every schema valid")
    status, summary, tool = max(problems, key=lambda p: _RANK[p[0]])
    r = result(tool_schemas, status, summary if len(problems) == 1 else f"{summary} (+{len(problems) - 1} more)",
               fix=fix, issue=TOOLS_NOT_FOUND if status == FAIL and strict else None,
               details=[f"{s}: {t}" for s, t, _ in problems[:30]] if len(problems) > 1 else [])
    if status != PASS:
        r.received = excerpt(tool)
    return r


# -- tools/call ------------------------------------------------------------------------------------


@check("tools-call", "tools/call returns content[] (text holding JSON, for the strict-sse profile)", 5,
       needs=("init", "tools"))
def tool_calls(run: Run) -> list[CheckResult]:
    """Call the tools it may: those given with ``--call``, and by default only those annotated read-only.

    MCP's defaults make a tool without annotations potentially destructive (``readOnlyHint`` false,
    ``destructiveHint`` true): a check must not write files, commit or delete because it was pointed at a
    server, so every other tool is listed as skipped, with why and how to opt in.
    """
    assert run.tools is not None
    opts = run.options
    listed = [t for t in run.tools if isinstance(t.get("name"), str)]
    plan: list[tuple[str, Any, str, dict[str, Any] | None]] = []  # name, arguments, origin, schema
    skipped: list[CheckResult] = []
    for tool in listed:
        name = tool["name"]
        if name in opts.calls:
            plan.append((name, opts.calls[name], "given", tool.get("inputSchema")))
        elif opts.no_call:
            continue
        elif opts.call_all or read_only(tool):
            schema = tool.get("inputSchema")
            plan.append((name, example_arguments(schema), "generated", schema))
        else:
            skipped.append(CheckResult(id=f"tools-call:{name}", title=f"tools/call {name}", status=SKIP,
                                       summary=f"not called: {not_read_only_reason(tool)}; --call-all or "
                                               f"--call '{{\"{name}\": {{...}}}}' to call it", section=5))
    names = {t["name"] for t in listed}
    for name, args in opts.calls.items():
        if name not in names:
            plan.append((name, args, "given, not in tools/list", None))
    if not plan and not skipped:
        why = "--no-call" if opts.no_call else "no tools"
        return [result(tool_calls, SKIP, f"not run: {why}")]
    return [_call_one(run, name, args, origin, schema) for name, args, origin, schema in plan] + skipped


def read_only(tool: dict[str, Any]) -> bool:
    """True when the tool says it changes nothing: ``annotations.readOnlyHint`` is ``true``."""
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def not_read_only_reason(tool: dict[str, Any]) -> str:
    """Why a tool is not taken as read-only, in the words of its annotations."""
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict) or "readOnlyHint" not in annotations:
        return "not annotated readOnlyHint: true"
    return f"annotated readOnlyHint: {jsonio.dumps_str(annotations.get('readOnlyHint'))}"


def _call_one(run: Run, name: str, args: Any, origin: str, schema: Any) -> CheckResult:
    rid = f"tools-call:{name}"
    title = f"tools/call {name}"
    probe = run.probe
    ex = probe.request("tools/call", {"name": name, "arguments": args}, label=f"tools/call {name}")
    notes = [f"arguments ({origin}): {excerpt(args, 160)}"]
    if origin == "generated":
        bad = argument_problem(schema, args)
        if bad:
            notes.append(f"the generated arguments do not satisfy the schema {bad}")
    resp = ex.response
    if resp is None:
        if ex.error and "within" in ex.error and ex.request_id is not None:
            probe.notify("notifications/cancelled", {"requestId": ex.request_id, "reason": "mcpreel check timeout"},
                         label=f"cancel tools/call {name}")
            return result(tool_calls, WARN, f"no answer within {run.options.timeout:g} s", ex=ex, id=rid, title=title,
                          details=notes, fix="give quicker arguments with --call, raise --timeout, or skip it "
                                             "with --no-call")
        return result(tool_calls, FAIL, _no_answer(ex, f"tools/call {name}"), ex=ex, id=rid, title=title, details=notes)
    if "error" in resp:
        err = resp.get("error")
        if not isinstance(err, dict):
            err = {}
        if err.get("code") == -32602:
            return result(tool_calls, WARN, f"the server rejected the arguments: {_error_text(resp)}", ex=ex, id=rid,
                          title=title, details=notes, fix=f"give arguments with --call '{{\"{name}\": {{...}}}}'")
        return result(tool_calls, FAIL, f"tools/call answered {_error_text(resp)}", ex=ex, id=rid, title=title,
                      details=notes, fix="report tool failures as a result with isError: true, not a JSON-RPC error")
    res = resp.get("result")
    if not isinstance(res, dict):
        return result(tool_calls, FAIL, "the result is not an object", ex=ex, id=rid, title=title, details=notes)
    status, summary, fix, issue, more = _judge_content(run, res)
    notes.extend(more)
    if res.get("isError") is True:
        summary += f"; isError: {excerpt(_first_text(res) or '', 100)}"
    if status == PASS:
        return CheckResult(id=rid, title=title, status=PASS, summary=summary, details=notes, section=5)
    return result(tool_calls, status, summary, ex=ex, fix=fix, issue=issue, id=rid, title=title, details=notes)


def _first_text(res: dict[str, Any]) -> str | None:
    return tool_result({"result": res}).text  # whatever the result's shape (SEP-3279's outputs too)


def _judge_content(run: Run, res: dict[str, Any]) -> tuple[str, str, str | None, str | None, list[str]]:
    """(status, summary, fix, named issue, further problems) for a tools/call result (its assistant content,
    whatever its shape: :func:`~mcpreel.operations.facts.tool_result`)."""
    content = res.get("content") if "content" in res else tool_result({"result": res}).content
    if not isinstance(content, list):
        return (FAIL, "result.content is missing or not an array",
                'answer {"content": [{"type": "text", "text": "<JSON string>"}]}', None, [])
    if not content:
        return (WARN, "result.content is empty", 'answer at least one {"type": "text", "text": ...} item', None, [])
    problems: list[tuple[str, str, str, str | None]] = []  # status, text, fix, issue
    kinds: list[str] = []
    for i, item in enumerate(content):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            problems.append((FAIL, f"content[{i}] has no type", 'give every content item a "type"', None))
            continue
        kind = item["type"]
        kinds.append(kind)
        if kind == "text":
            text = item.get("text")
            if isinstance(text, (dict, list)):
                problems.append((FAIL, f"content[{i}].text is a raw {'object' if isinstance(text, dict) else 'array'}, "
                                       "not a string", "stringify it first: \"text\": json.dumps(data)", INVALID_JSON))
            elif not isinstance(text, str):
                problems.append((FAIL, f"content[{i}].text is not a string", '"text" must be a string', INVALID_JSON))
            elif run.strict_format:
                try:
                    jsonio.loads(text)
                except (ValueError, UnicodeDecodeError, RecursionError):
                    problems.append((FAIL, f"content[{i}].text is not JSON: {excerpt(text, 80)}",
                                     'strict SSE clients parse text as JSON: put json.dumps(result) in "text"',
                                     INVALID_JSON))
        elif run.strict_format:
            problems.append((FAIL, f"content[{i}] is of type {kind!r}; the strict-sse profile accepts only type \"text\"",
                             'return the data as {"type": "text", "text": json.dumps(data)}', None))
        elif kind not in CONTENT_TYPES:
            problems.append((WARN, f"content[{i}] is of type {kind!r}, which MCP does not define",
                             f"use one of {', '.join(sorted(CONTENT_TYPES))}", None))
    if problems:
        status, text, fix, issue = max(problems, key=lambda p: _RANK[p[0]])
        more = [f"{p[0]}: {p[1]}" for p in problems] if len(problems) > 1 else []
        return status, text, fix, issue, more
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    what = ", ".join(f"{n} {k}" for k, n in counts.items())
    return (PASS, f"{what} item{'s' if len(kinds) > 1 else ''}" + (" (JSON text)" if run.strict_format else ""),
            None, None, [])
