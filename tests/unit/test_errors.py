"""errors.py: aiokafka compatibility, one class per Kafka code, agreement with the Rust table."""

from __future__ import annotations

import inspect

import aiokafka.errors as aio
import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors


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
    decoder = _native.FrameDecoder(16)
    with pytest.raises(Errors.FrameTooLargeError, match="exceeds the maximum of 16"):
        decoder.feed(b"\x7f\x00\x00\x00")
