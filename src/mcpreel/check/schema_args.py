"""Arguments for a tool call, made from the tool's ``inputSchema``.

The check calls every tool it is allowed to call; a tool's schema is all it knows about it. The
arguments are the plainest ones the schema accepts: only ``required`` properties (an optional one may
switch on behaviour nobody asked for), each from its ``const``, ``default``, first ``examples`` or
``enum`` value, else a small value of its type that meets its bounds. ``$ref`` to local definitions,
``anyOf``/``oneOf`` (first non-null branch) and ``allOf`` (merged) are followed.

:func:`schema_problem` says whether a schema is a valid JSON Schema, and :func:`argument_problem`
whether arguments satisfy one (both with ``jsonschema``, which the official SDK already brings).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["argument_problem", "example_arguments", "example_value", "schema_problem"]

_MAX_DEPTH = 12

_FORMATS = {
    "date-time": "2025-01-01T00:00:00Z",
    "date": "2025-01-01",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "url": "https://example.com/",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "duration": "PT1S",
}


def _resolve(schema: Any, root: Any, depth: int) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < _MAX_DEPTH:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {k: v for k, v in schema.items() if k != "$ref"}
        target: Any = root
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        if target is None:
            return {k: v for k, v in schema.items() if k != "$ref"}
        merged = dict(target) if isinstance(target, dict) else {}
        merged.update({k: v for k, v in schema.items() if k != "$ref"})
        schema = merged
        seen += 1
    return schema


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    lo = schema.get("minimum")
    hi = schema.get("maximum")
    xlo = schema.get("exclusiveMinimum")
    xhi = schema.get("exclusiveMaximum")
    # draft-04 spells exclusive bounds as booleans beside minimum/maximum
    if xlo is True and isinstance(lo, (int, float)):
        xlo, lo = lo, None
    if xhi is True and isinstance(hi, (int, float)):
        xhi, hi = hi, None
    step = schema.get("multipleOf")
    value: float = 1
    if isinstance(lo, (int, float)) and not isinstance(lo, bool):
        value = max(value, lo)
    if isinstance(xlo, (int, float)) and not isinstance(xlo, bool) and value <= xlo:
        value = xlo + (1 if integer else 0.5)
    if isinstance(hi, (int, float)) and not isinstance(hi, bool):
        value = min(value, hi)
    if isinstance(xhi, (int, float)) and not isinstance(xhi, bool) and value >= xhi:
        value = xhi - (1 if integer else 0.5)
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        k = -(-value // step)  # ceil
        value = k * step
    if integer:
        import math

        value = math.ceil(value)
        return int(value)
    return int(value) if float(value).is_integer() else value


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    value = _FORMATS.get(fmt, "example") if isinstance(fmt, str) else "example"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            rx = re.compile(pattern)
        except re.error:
            rx = None
        if rx is not None and not rx.search(value):
            for candidate in ("a", "A", "0", "1", "abc", "ABC", "a1", "example-1", "x_y", "2025-01-01", "a@b.co"):
                if rx.search(candidate):
                    value = candidate
                    break
    lo = schema.get("minLength")
    hi = schema.get("maxLength")
    if isinstance(lo, int) and len(value) < lo:
        value = value + "x" * (lo - len(value))
    if isinstance(hi, int) and hi >= 0 and len(value) > hi:
        value = value[:hi]
    return value


def example_value(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A small value that the schema accepts (best effort: ``not``, patterns and the like may defeat it)."""
    root = schema if root is None else root
    schema = _resolve(schema, root, depth)
    if schema is True or not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return "example"
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return next((v for v in enum if v is not None), enum[0])
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            branches = [_resolve(o, root, depth) for o in options]
            pick = next((b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")), branches[0])
            base = {k: v for k, v in schema.items() if k != key}
            if isinstance(pick, dict):
                base.update(pick)
            return example_value(base, root, depth + 1)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in all_of:
            part = _resolve(part, root, depth)
            if not isinstance(part, dict):
                continue
            for k, v in part.items():
                if k == "properties" and isinstance(v, dict):
                    merged["properties"] = {**merged.get("properties", {}), **v}
                elif k == "required" and isinstance(v, list):
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *v]))
                else:
                    merged.setdefault(k, v)
        return example_value(merged, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        if "properties" in schema or "required" in schema:
            kind = "object"
        elif "items" in schema:
            kind = "array"
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, list):  # draft-04 tuple form
            return [example_value(i, root, depth + 1) for i in items]
        n = schema.get("minItems", 1)
        n = n if isinstance(n, int) and n >= 0 else 1
        hi = schema.get("maxItems")
        if isinstance(hi, int) and hi >= 0:
            n = min(n, hi)
        one = example_value(items if items is not None else {}, root, depth + 1)
        if schema.get("uniqueItems") and n > 1 and isinstance(one, (int, float)) and not isinstance(one, bool):
            return [one + i for i in range(n)]
        return [one for _ in range(n)]
    if kind == "integer":
        return _number(schema, True)
    if kind == "number":
        return _number(schema, False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _object(schema: dict[str, Any], root: Any, depth: int) -> dict[str, Any]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        props = {}
    required = schema.get("required")
    if not isinstance(required, list):
        required = []
    out: dict[str, Any] = {}
    for name in required:
        if isinstance(name, str):
            out[name] = example_value(props.get(name, {}), root, depth + 1)
    lo = schema.get("minProperties")
    if isinstance(lo, int):
        for name, sub in props.items():
            if len(out) >= lo:
                break
            out.setdefault(name, example_value(sub, root, depth + 1))
    return out


def example_arguments(input_schema: Any) -> dict[str, Any]:
    """The arguments a tool is called with when the user gave none."""
    value = example_value(input_schema if isinstance(input_schema, dict) else {"type": "object"})
    return value if isinstance(value, dict) else {}


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema.validators import Draft202012Validator, validator_for

    return validator_for(schema, default=Draft202012Validator)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (its own ``$schema`` draft, else 2020-12), or None."""
    if not isinstance(schema, dict):
        return "is not a JSON object"
    from jsonschema.exceptions import SchemaError

    try:
        _validator(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"at {where}: {exc.message}"
    except Exception as exc:  # an unresolvable $schema or a reference the library cannot follow
        return f"cannot be used: {exc}"
    return None


def argument_problem(schema: Any, arguments: Any) -> str | None:
    """Why ``arguments`` do not satisfy ``schema`` (the first error), or None."""
    if not isinstance(schema, dict) or schema_problem(schema):
        return None
    from jsonschema.exceptions import best_match

    try:
        errors = list(_validator(schema)(schema).iter_errors(arguments))
    except Exception:  # a reference the library cannot resolve: do not guess
        return None
    if not errors:
        return None
    err = best_match(errors)
    where = "/".join(str(p) for p in err.absolute_path) or "(root)"
    return f"at {where}: {err.message}"
