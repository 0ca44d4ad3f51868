"""Generate the typed shapes of every Kafka message from the Rust declarations.

The Rust core declares each API in ``rust/protocol/messages/<api>.rs``: an ``impl Api for X``
block (name, key, version range, request and response types) and ``kafka_struct!`` blocks
(``name: Type [min, max] = default`` per field, and ``name: Type = tag [min, max]`` per tagged
field). This script reads those declarations, strictly (anything it does not understand is an
error, never a guess), and rewrites the generated regions of:

* ``python/ferrokafka/_native.pyi``: one ``TypedDict`` per request and response struct. In a
  request a field may be omitted (its default applies) when some version the API speaks lacks
  it, when it declares a default, or when it is tagged. A response has every field: the decoder
  fills fields a version lacks with their defaults and tagged fields not sent with None. Bytes
  are ``bytes``, except a Fetch response's ``records`` (their own Rust type, ``FetchRecords``),
  which the connection's Fetch decoder hands out as ``SharedBytes``; UUIDs are 16 ``bytes``.
* ``python/ferrokafka/protocol.py``: the ``ApiKey`` members and the typed ``Api`` descriptors.

The unit tests check that the regions are current and that the shapes match what the built
native module encodes and decodes.

Run: ``.venv/bin/python tools/gen_stub.py`` (rewrite), ``--check`` (exit 1 when stale).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = ROOT / "rust" / "protocol" / "messages"
STUB = ROOT / "python" / "ferrokafka" / "_native.pyi"
PROTOCOL = ROOT / "python" / "ferrokafka" / "protocol.py"

COMMON = "common"
"""The module of structs several APIs share (no API of its own)."""
NOT_MESSAGES = {"mod", "golden"}

SCALARS = {
    "i8": "int",
    "i16": "int",
    "i32": "int",
    "i64": "int",
    "u16": "int",
    "u32": "int",
    "f64": "float",
    "bool": "bool",
    "String": "str",
    "ByteBuf": "bytes",
    "Uuid": "bytes",
    # A Fetch or ShareFetch response's records: ``_native.decode_fetch_response`` and
    # ``decode_share_fetch_response`` (the connection's decoders of those responses) give them as
    # views of the received frame.
    "FetchRecords": "SharedBytes",
}

INF = 1 << 15


class DeclarationError(Exception):
    """A declaration this script does not understand."""


@dataclass(frozen=True)
class Field:
    name: str
    rust_type: str
    min_version: int
    max_version: int | None
    has_default: bool
    tag: int | None


@dataclass
class Struct:
    name: str
    module: str
    fields: list[Field]
    py_name: str = ""


@dataclass(frozen=True)
class ApiDecl:
    name: str
    key: int
    min_version: int
    max_version: int
    request: str
    response: str
    module: str


@dataclass
class Schema:
    apis: list[ApiDecl]
    structs: dict[tuple[str, str], Struct]

    def resolve(self, module: str, name: str) -> Struct:
        for scope in (module, COMMON):
            found = self.structs.get((scope, name))
            if found is not None:
                return found
        raise DeclarationError(f"{module}.rs: unknown type {name}")


# -- parsing -----------------------------------------------------------------------------------


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _block(text: str, start: int) -> tuple[str, int]:
    """The text inside the brace block opening at or after ``start``, and the end index."""
    open_at = text.index("{", start)
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i], i + 1
    raise DeclarationError("unbalanced braces")


def _split_top(text: str) -> list[str]:
    """``text`` split at commas outside brackets."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


_FIELD = re.compile(
    r"(?P<name>[a-z_][a-z0-9_]*)\s*:\s*(?P<type>[^\[=]+?)\s*"
    r"\[\s*(?P<min>\d+)\s*,\s*(?P<max>\d+|_)\s*\]\s*(?:=\s*(?P<default>.+))?",
    re.S,
)
_TAGGED = re.compile(
    r"(?P<name>[a-z_][a-z0-9_]*)\s*:\s*(?P<type>[^\[=]+?)\s*=\s*(?P<tag>\d+)\s*"
    r"\[\s*(?P<min>\d+)\s*,\s*(?P<max>\d+|_)\s*\]",
    re.S,
)


def _fields(body: str, pattern: re.Pattern[str], where: str, tagged: bool) -> list[Field]:
    out = []
    for item in _split_top(body):
        m = pattern.fullmatch(item)
        if m is None:
            raise DeclarationError(f"{where}: cannot read field {item!r}")
        out.append(
            Field(
                name=m["name"],
                rust_type=re.sub(r"\s+", "", m["type"]),
                min_version=int(m["min"]),
                max_version=None if m["max"] == "_" else int(m["max"]),
                has_default=not tagged and m["default"] is not None,
                tag=int(m["tag"]) if tagged else None,
            )
        )
    return out


def _parse_structs(module: str, text: str) -> list[Struct]:
    structs = []
    for m in re.finditer(r"kafka_struct!\s*\{", text):
        body, _ = _block(text, m.start())
        head = re.match(r"\s*pub\s+struct\s+(\w+)\s*\{", body)
        if head is None:
            raise DeclarationError(f"{module}.rs: kafka_struct! without `pub struct Name {{`")
        name = head[1]
        where = f"{module}.rs {name}"
        plain, end = _block(body, head.start())
        fields = _fields(plain, _FIELD, where, tagged=False)
        rest = body[end:].strip()
        if rest:
            tm = re.match(r"tagged\s*\{", rest)
            if tm is None:
                raise DeclarationError(f"{where}: unexpected {rest[:40]!r}")
            tagged, tail = _block(rest, 0)
            if rest[tail:].strip():
                raise DeclarationError(f"{where}: unexpected {rest[tail:][:40]!r}")
            fields += _fields(tagged, _TAGGED, where, tagged=True)
        structs.append(Struct(name, module, fields))
    return structs


def _api_const(body: str, name: str, where: str) -> str:
    m = re.search(rf"const\s+{name}\s*:\s*[^=]+=\s*([^;]+);", body)
    if m is None:
        raise DeclarationError(f"{where}: no const {name}")
    return m[1].strip()


def _api_type(body: str, name: str, where: str) -> str:
    m = re.search(rf"type\s+{name}\s*=\s*(\w+)\s*;", body)
    if m is None:
        raise DeclarationError(f"{where}: no type {name}")
    return m[1]


def _parse_apis(module: str, text: str) -> list[ApiDecl]:
    apis = []
    for m in re.finditer(r"impl\s+Api\s+for\s+(\w+)\s*\{", text):
        body, _ = _block(text, m.start())
        where = f"{module}.rs {m[1]}"
        name = _api_const(body, "NAME", where)
        if not re.fullmatch(r'"\w+"', name):
            raise DeclarationError(f"{where}: NAME is not a plain string")
        apis.append(
            ApiDecl(
                name=name.strip('"'),
                key=int(_api_const(body, "KEY", where)),
                min_version=int(_api_const(body, "MIN_VERSION", where)),
                max_version=int(_api_const(body, "MAX_VERSION", where)),
                request=_api_type(body, "Request", where),
                response=_api_type(body, "Response", where),
                module=module,
            )
        )
    return apis


def parse(messages: Path = MESSAGES) -> Schema:
    """Every API and struct declared under ``messages``."""
    apis: list[ApiDecl] = []
    structs: dict[tuple[str, str], Struct] = {}
    for path in sorted(messages.glob("*.rs")):
        module = path.stem
        if module in NOT_MESSAGES:
            continue
        text = _strip_comments(path.read_text())
        text = text.split("#[cfg(test)]", 1)[0]
        for s in _parse_structs(module, text):
            structs[(module, s.name)] = s
        found = _parse_apis(module, text)
        if module == COMMON and found:
            raise DeclarationError("common.rs declares an API")
        if module != COMMON and len(found) != 1:
            raise DeclarationError(f"{module}.rs: {len(found)} `impl Api` blocks, expected 1")
        apis += found
    apis.sort(key=lambda a: a.key)
    schema = Schema(apis, structs)
    _name_structs(schema)
    return schema


def _name_structs(schema: Schema) -> None:
    """Python names: the Rust name, prefixed with its API's name where two APIs reuse it."""
    count: dict[str, int] = {}
    for s in schema.structs.values():
        count[s.name] = count.get(s.name, 0) + 1
    api_of = {a.module: a.name for a in schema.apis}
    for s in schema.structs.values():
        if count[s.name] == 1 or s.module == COMMON:
            s.py_name = s.name
        else:
            s.py_name = api_of[s.module] + s.name


# -- types ------------------------------------------------------------------------------------


def _generic(rust_type: str) -> tuple[str, str] | None:
    m = re.fullmatch(r"(Option|Vec)<(.+)>", rust_type)
    return (m[1], m[2]) if m else None


def py_type(schema: Schema, module: str, rust_type: str) -> str:
    """The Python type of a value of ``rust_type`` as it crosses the native boundary."""
    generic = _generic(rust_type)
    if generic is not None:
        inner = py_type(schema, module, generic[1])
        return f"{inner} | None" if generic[0] == "Option" else f"list[{inner}]"
    if rust_type in SCALARS:
        return SCALARS[rust_type]
    return schema.resolve(module, rust_type).py_name


def _struct_names(rust_type: str) -> list[str]:
    generic = _generic(rust_type)
    if generic is not None:
        return _struct_names(generic[1])
    return [] if rust_type in SCALARS else [rust_type]


@dataclass
class _Use:
    """How a struct is reached: as part of requests, responses, and which fields a request
    must give in every place it appears."""

    api: ApiDecl
    request: bool = False
    response: bool = False
    required: set[str] | None = None
    order: int = 0


@dataclass
class Shapes:
    schema: Schema
    uses: dict[tuple[str, str], _Use] = field(default_factory=dict)

    def walk(self, api: ApiDecl, struct: Struct, lo: int, hi: int, request: bool) -> None:
        key = (struct.module, struct.name)
        use = self.uses.get(key)
        if use is None:
            use = self.uses[key] = _Use(api, order=len(self.uses))
        if request:
            use.request = True
            required = {
                f.name
                for f in struct.fields
                if f.tag is None
                and not f.has_default
                and f.min_version <= lo
                and (f.max_version is None or f.max_version >= hi)
            }
            use.required = required if use.required is None else use.required & required
        else:
            use.response = True
        for f in struct.fields:
            sub_lo = max(lo, f.min_version)
            sub_hi = hi if f.max_version is None else min(hi, f.max_version)
            if sub_lo > sub_hi:  # never sent in a version this API speaks
                sub_lo, sub_hi = f.min_version, f.max_version or INF
            for name in _struct_names(f.rust_type):
                nested = self.schema.resolve(struct.module, name)
                self.walk(api, nested, sub_lo, sub_hi, request)


def shapes(schema: Schema) -> Shapes:
    out = Shapes(schema)
    for api in schema.apis:
        for name, request in ((api.request, True), (api.response, False)):
            struct = schema.resolve(api.module, name)
            out.walk(api, struct, api.min_version, api.max_version, request)
    for (module, name), use in out.uses.items():
        everything = {f.name for f in schema.structs[(module, name)].fields}
        if use.request and use.response and use.required != everything:
            raise DeclarationError(
                f"{module}.rs {name}: in a request (where {sorted(everything - use.required)} "
                "may be omitted) and in a response (where every field is present)"
            )
    return out


# -- rendering --------------------------------------------------------------------------------

BEGIN = "# BEGIN GENERATED by tools/gen_stub.py from rust/protocol/messages: do not edit"
END = "# END GENERATED"


def _versions(f: Field) -> str:
    if f.max_version is None:
        versions = f"v{f.min_version}+" if f.min_version else ""
    else:
        versions = f"v{f.min_version}-{f.max_version}"
    parts = [f"tag {f.tag}"] if f.tag is not None else []
    if versions:
        parts.append(versions)
    return "  # " + ", ".join(parts) if parts else ""


def render_stub(schema: Schema) -> str:
    """The TypedDicts of every request and response struct (the stub's generated region)."""
    found = shapes(schema)
    tops = {}
    for api in schema.apis:
        tops[(api.module, api.request)] = f"{api.name} request (key {api.key})"
        tops[(api.module, api.response)] = f"{api.name} response (key {api.key})"
    lines: list[str] = []
    for key, use in sorted(found.uses.items(), key=lambda kv: kv[1].order):
        struct = schema.structs[key]
        lines += ["", "@type_check_only", f"class {struct.py_name}(TypedDict):"]
        if key in tops:
            versions = f"v{use.api.min_version}-{use.api.max_version}"
            lines.append(f'    """{tops[key]}, {versions}."""')
            lines.append("")
        for f in struct.fields:
            rust_type = f"Option<{f.rust_type}>" if f.tag is not None else f.rust_type
            typ = py_type(schema, struct.module, rust_type)
            if use.request and f.name not in (use.required or set()):
                typ = f"NotRequired[{typ}]"
            lines.append(f"    {f.name}: {typ}{_versions(f)}")
    return "\n".join([BEGIN, *lines[1:], "", END])


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def render_api_keys(schema: Schema) -> str:
    lines = [f"    {_upper_snake(a.name)} = {a.key}" for a in schema.apis]
    return "\n".join([f"    {BEGIN}", *lines, f"    {END}"])


def _wrapped(head: str, inner: str, indent: str, limit: int = 100) -> list[str]:
    """``head[inner]`` on one line, or over three when longer than ``limit``, as ruff does."""
    line = f"{indent}{head}[{inner}]"
    if len(line) <= limit:
        return [line]
    return [f"{indent}{head}[", f"{indent}    {inner}", f"{indent}]"]


def render_api_descriptors(schema: Schema) -> str:
    lines = []
    for a in schema.apis:
        request = schema.resolve(a.module, a.request).py_name
        response = schema.resolve(a.module, a.response).py_name
        lines += _wrapped(
            f"{_upper_snake(a.name)}: ClassVar", f"Api[{request}, {response}]", "    "
        )
    return "\n".join([f"    {BEGIN}", *lines, f"    {END}"])


def render_api_imports(schema: Schema) -> str:
    names = set()
    for a in schema.apis:
        names.add(schema.resolve(a.module, a.request).py_name)
        names.add(schema.resolve(a.module, a.response).py_name)
    lines = [f"        {n}," for n in sorted(names)]
    body = ["    from ._native import (", *lines, "    )"]
    return "\n".join([f"    {BEGIN}", *body, f"    {END}"])


def _replace_regions(text: str, regions: list[str], path: Path) -> str:
    """``text`` with its generated regions, in order, replaced by ``regions``."""
    out, pos = [], 0
    for region in regions:
        indent = region[: len(region) - len(region.lstrip())]
        start = text.find(f"{indent}{BEGIN}\n", pos)
        if start < 0:
            raise DeclarationError(f"{path}: missing generated region {len(out) // 2 + 1}")
        end = text.find(f"{indent}{END}\n", start)
        if end < 0:
            raise DeclarationError(f"{path}: generated region without its end marker")
        out += [text[pos:start], region]
        pos = end + len(f"{indent}{END}")
    out.append(text[pos:])
    return "".join(out)


def generated(schema: Schema | None = None) -> dict[Path, str]:
    """Every generated file's whole text as it should be."""
    schema = schema or parse()
    stub = _replace_regions(STUB.read_text(), [render_stub(schema)], STUB)
    protocol = _replace_regions(
        PROTOCOL.read_text(),
        [
            render_api_imports(schema),
            render_api_keys(schema),
            render_api_descriptors(schema),
        ],
        PROTOCOL,
    )
    return {STUB: stub, PROTOCOL: protocol}


def stale(files: dict[Path, str] | None = None) -> list[Path]:
    """The generated files whose text differs from what the declarations give."""
    files = generated() if files is None else files
    return [path for path, text in files.items() if path.read_text() != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    files = generated()
    old = stale(files)
    if args.check:
        for path in old:
            print(f"{path.relative_to(ROOT)} is stale: run tools/gen_stub.py", file=sys.stderr)
        return 1 if old else 0
    for path in old:
        path.write_text(files[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
