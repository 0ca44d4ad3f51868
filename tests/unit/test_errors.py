"""errors.py: aiokafka compatibility, one class per Kafka code, agreement with the Rust table,
and the generator that writes both from rust/protocol/error_codes.txt."""

from __future__ import annotations

import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import aiokafka.errors as aio
import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "gen_errors.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_errors", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while decorating
    spec.loader.exec_module(module)
    return module


def _aiokafka_classes() -> dict[str, type[BaseException]]:
    return {
        name: obj
        for name, obj in vars(aio).items()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__ == aio.__name__
    }


def test_every_aiokafka_error_exists_with_the_same_meaning() -> None:
    for name, theirs in _aiokafka_classes().items():
        ours = getattr(Errors, name)
        assert ours.__bases__[0].__name__ == theirs.__bases__[0].__name__, name
        for attr in ("errno", "message", "retriable", "invalid_metadata"):
            assert getattr(ours, attr, None) == getattr(theirs, attr, None), (name, attr)
    assert set(aio.__all__) <= set(Errors.__all__)


def test_aiokafka_aliases_are_the_same_class() -> None:
    assert Errors.CoordinatorLoadInProgressError is Errors.GroupLoadInProgressError
    assert Errors.InvalidMessageError is Errors.CorruptRecordException
    assert Errors.for_code(14) is Errors.GroupLoadInProgressError


def test_one_class_per_kafka_code_matching_the_rust_table() -> None:
    native = _native.error_codes()
    assert len(native) >= 130 and max(native) >= 133
    for code, (name, _retriable) in native.items():
        cls = Errors.for_code(code)
        assert cls is not Errors.UnknownError or code == -1, f"no class for {code} {name}"
        assert cls.errno == code
    # New codes (those aiokafka lacks) follow Java's retriability.
    aio_codes = {getattr(c, "errno", None) for c in _aiokafka_classes().values()}
    for code, (name, retriable) in native.items():
        if code not in aio_codes:
            assert Errors.for_code(code).retriable == retriable, name
            assert Errors.for_code(code).message == name


def test_known_flags() -> None:
    assert Errors.for_code(6) is Errors.NotLeaderForPartitionError
    assert Errors.NotLeaderForPartitionError.retriable
    assert Errors.NotLeaderForPartitionError.invalid_metadata
    assert Errors.FencedLeaderEpochError.errno == 74
    assert Errors.FencedLeaderEpochError.invalid_metadata
    assert not Errors.TopicAuthorizationFailedError.retriable
    assert Errors.UnknownTopicIdError.errno == 100


def test_unknown_code_falls_back() -> None:
    assert Errors.for_code(31999) is Errors.UnknownError


def test_registry_refuses_a_second_class_for_a_code() -> None:
    with pytest.raises(TypeError, match="error code 3 is already UnknownTopicOrPartitionError"):

        class Duplicate(Errors.BrokerResponseError):
            errno = 3
            message = "DUPLICATE"

    assert Errors.for_code(3) is Errors.UnknownTopicOrPartitionError


def test_messages_are_kept() -> None:
    err = Errors.for_code(1)("partition t-0 at offset 5")
    assert str(err) == "[Error 1] OffsetOutOfRangeError: partition t-0 at offset 5"
    assert str(Errors.KafkaConnectionError("x")) == "KafkaConnectionError: x"
    assert issubclass(Errors.FrameTooLargeError, Errors.ProtocolDecodeError)
    assert issubclass(Errors.ProtocolDecodeError, Errors.KafkaProtocolError)


def test_native_errors_are_ferrokafka_classes() -> None:
    with pytest.raises(Errors.ProtocolDecodeError, match="truncated"):
        _native.decode_response(3, 12, b"\x00\x00\x00\x01\x00")
    with pytest.raises(Errors.IncompatibleBrokerVersion, match="api key 999"):
        _native.encode_request(999, 0, 1, None, {})
    with pytest.raises(Errors.IncompatibleBrokerVersion, match="Metadata version 99"):
        _native.encode_request(3, 99, 1, None, {})
    with pytest.raises(TypeError, match="Metadata"):
        _native.encode_request(3, 12, 1, None, {"no_such_field": 1})
    decoder = _native._FrameDecoder(16)
    with pytest.raises(Errors.FrameTooLargeError, match="exceeds the maximum of 16"):
        decoder.feed(b"\x7f\x00\x00\x00")


def test_generated_error_code_files_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def _copy_sources(tmp_path: Path) -> Path:
    gen = _generator()
    for path in (gen.TABLE, gen.RUST, gen.PYTHON):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    return tmp_path


def test_check_names_the_stale_file_and_a_run_makes_it_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gen = _generator()
    root = _copy_sources(tmp_path)
    table = root / gen.TABLE
    text = table.read_text()
    table.write_text(text.replace('"Unknown member id."', '"Unknown member."'))
    assert gen.main(["--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "python/ferrokafka/errors.py is stale" in err
    assert "error_code.rs" not in err  # Rust does not carry the description
    assert gen.main(["--root", str(root)]) == 0
    assert 'description = "Unknown member."' in (root / gen.PYTHON).read_text()
    assert gen.main(["--check", "--root", str(root)]) == 0

    table.write_text(re.sub(r"(?m)^(\s*113\s+STALE_MEMBER_EPOCH\s+)no", r"\1yes", text))
    assert gen.main(["--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "rust/protocol/error_code.rs is stale" in err and "errors.py is stale" in err


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ('6 NOT_LEADER_OR_FOLLOWER maybe no "x"', "retriable is 'maybe'"),
        ('6 not_leader no no "x"', "not UPPER_SNAKE_CASE"),
        ('6 NOT_LEADER no no "x" colour=red', "unknown key 'colour'"),
        ('6 NOT_LEADER no no "x" class=Not-A-Name', "not a Python identifier"),
        ("6 NOT_LEADER no no", "expected code, name"),
        ('1 OFFSET_OUT_OF_RANGE no no "x"', "code given twice: 1"),
        ('134 UNKNOWN_MEMBER_ID no no "x"', "name given twice: UNKNOWN_MEMBER_ID"),
        ('134 NEW_ONE no no "x" class=NoError', "Python name given twice: NoError"),
    ],
)
def test_the_table_refuses_what_it_cannot_generate(line: str, complaint: str) -> None:
    gen = _generator()
    text = (ROOT / gen.TABLE).read_text()
    with pytest.raises(gen.TableError, match=complaint):
        gen.read_table(text + line + "\n", "t")


def test_the_table_is_the_source_of_both_sides() -> None:
    gen = _generator()
    rows = gen.read_table((ROOT / gen.TABLE).read_text())
    native = _native.error_codes()
    assert {row.code: (row.name, row.retriable) for row in rows if row.code != 0} == native
    for row in rows:
        cls = Errors.for_code(row.code)
        assert cls.__name__ == row.python_class
        assert (cls.message, cls.retriable, cls.invalid_metadata, cls.description) == (
            row.python_message,
            row.python_retriable,
            row.invalid_metadata,
            row.description,
        )
        assert all(getattr(Errors, alias) is cls for alias in row.aliases)
