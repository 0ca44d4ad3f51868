"""The typed message shapes (``TypedDict``s in ``_native.pyi``, ``ApiKey`` and ``Api`` in
``protocol.py``) are generated from the Rust declarations by ``tools/gen_stub.py``: they are
current, they match what the built native module encodes and decodes (through the
connection's ``encode_request``/``decode_response``, which take Produce's and Fetch's own entry
points), field by field and version by version, and mypy uses them to catch a misspelt request
or response key."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka.conn import decode_response, encode_request
from ferrokafka.protocol import Api, ApiKey, key_of

ROOT = Path(__file__).resolve().parents[2]


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_stub", ROOT / "tools" / "gen_stub.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_stub"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
SCHEMA = gen.parse()


def test_generated_files_are_current() -> None:
    assert gen.stale() == [], "run .venv/bin/python tools/gen_stub.py"


def test_stale_files_are_reported() -> None:
    files = gen.generated()
    for path, text in files.items():
        assert gen.stale({path: text + "#"}) == [path]


def test_apis_are_the_native_modules() -> None:
    supported = _native.supported_apis()
    parsed = {a.key: (a.name, a.min_version, a.max_version) for a in SCHEMA.apis}
    assert parsed == {k: v[:3] for k, v in supported.items()}
    assert {k.value: k.name for k in ApiKey} == {
        a.key: gen._upper_snake(a.name) for a in SCHEMA.apis
    }
    for key in ApiKey:
        api = getattr(Api, key.name)
        assert isinstance(api, Api) and api.key is key and key_of(api) is key
        assert api == key and hash(api) == hash(key)
    assert key_of(3) == 3


# -- every field, every version, through the native module -------------------------------------


def _sample(module: str, rust_type: str) -> Any:
    """A value of ``rust_type`` with every optional part present and every list non-empty."""
    generic = gen._generic(rust_type)
    if generic is not None:
        inner = _sample(module, generic[1])
        return inner if generic[0] == "Option" else [inner]
    scalars: dict[str, Any] = {
        "bool": True,
        "String": "s",
        "ByteBuf": b"\x00\x01payload",
        "FetchRecords": b"\x00\x01records",
        "Uuid": bytes(range(1, 17)),
        "f64": 1.5,
    }
    if rust_type in scalars:
        return scalars[rust_type]
    if rust_type in gen.SCALARS:
        return 7
    struct = SCHEMA.resolve(module, rust_type)
    return {f.name: _sample(struct.module, f.rust_type) for f in struct.fields}


def _present(field: Any, version: int, flexible: bool) -> bool:
    in_range = field.min_version <= version and (
        field.max_version is None or version <= field.max_version
    )
    return in_range and (field.tag is None or flexible)


def _check(
    decoded: Any,
    sent: Any,
    module: str,
    rust_type: str,
    version: int,
    flexible: bool,
    where: str,
) -> None:
    """``decoded`` has the generated shape of ``rust_type`` and, where the version carries
    them, the values ``sent``."""
    generic = gen._generic(rust_type)
    if generic is not None:
        if generic[0] == "Option":
            _check(decoded, sent, module, generic[1], version, flexible, where)
        else:
            assert isinstance(decoded, list) and len(decoded) == 1, where
            _check(decoded[0], sent[0], module, generic[1], version, flexible, where)
        return
    if rust_type in ("ByteBuf", "Uuid", "FetchRecords"):
        want = _native.SharedBytes if rust_type == "FetchRecords" else bytes
        assert type(decoded) is want, f"{where}: {type(decoded).__name__}"
        assert bytes(decoded) == sent, where
        return
    if rust_type in gen.SCALARS:
        py = {"int": int, "float": float, "bool": bool, "str": str}[gen.SCALARS[rust_type]]
        assert type(decoded) is py and decoded == sent, where
        return
    struct = SCHEMA.resolve(module, rust_type)
    assert isinstance(decoded, dict), where
    assert list(decoded) == [f.name for f in struct.fields], f"{where}: keys"
    for f in struct.fields:
        if _present(f, version, flexible):
            _check(
                decoded[f.name],
                sent[f.name],
                struct.module,
                f.rust_type,
                version,
                flexible,
                f"{where}.{f.name}",
            )


@pytest.mark.parametrize("api", SCHEMA.apis, ids=lambda a: a.name)
def test_shapes_match_the_native_module(api: Any) -> None:
    first_flexible = _native.supported_apis()[api.key][3]
    request = _sample(api.module, api.request)
    response = _sample(api.module, api.response)
    for v in range(api.min_version, api.max_version + 1):
        flexible = v >= first_flexible
        frame = encode_request(api.key, v, 5, "c", request)
        key, version, _, _, decoded = _native.decode_request(frame[4:])
        assert (key, version) == (api.key, v)
        where = f"{api.name} v{v} request"
        _check(decoded, request, api.module, api.request, v, flexible, where)

        frame = _native.encode_response(api.key, v, 5, response)
        decoded = decode_response(api.key, v, frame[4:])
        where = f"{api.name} v{v} response"
        _check(decoded, response, api.module, api.response, v, flexible, where)


def test_unknown_field_names_are_rejected() -> None:
    with pytest.raises(TypeError):
        _native.encode_request(ApiKey.METADATA, 12, 1, None, {"topicz": None})


# -- mypy sees misspelt keys -----------------------------------------------------------------

_SNIPPET = """
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import Api
from ferrokafka._native import MetadataRequest


async def leaders(client: AIOKafkaClient) -> dict[str, int]:
    body: MetadataRequest = {{"{request_key}": None, "allow_auto_topic_creation": False}}
    response = await client.send_to_any(Api.METADATA, body)
    out: dict[str, int] = {{}}
    for topic in response["topics"]:
        for p in topic["partitions"]:
            out[topic["name"] or ""] = p["{response_key}"]
    return out
"""


def _mypy(tmp_path: Path, request_key: str, response_key: str) -> tuple[str, int]:
    api = pytest.importorskip("mypy.api")
    source = tmp_path / f"snippet_{request_key}_{response_key}.py"
    source.write_text(
        textwrap.dedent(_SNIPPET.format(request_key=request_key, response_key=response_key))
    )
    stdout, stderr, status = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--python-version",
            "3.10",
            str(source),
        ]
    )
    return stdout + stderr, status


def test_mypy_reports_misspelt_keys(tmp_path: Path) -> None:
    out, status = _mypy(tmp_path, "topics", "leader_id")
    assert status == 0, out
    out, status = _mypy(tmp_path, "topicz", "leader_idd")
    assert status == 1, out
    assert 'Extra key "topicz" for TypedDict "MetadataRequest"' in out, out
    assert 'TypedDict "MetadataResponsePartition" has no key "leader_idd"' in out, out
