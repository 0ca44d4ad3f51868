"""The native module keeps its invariants whatever its Python caller hands it: Arrow buffers
changed after they were checked, null rows, malformed C Data Interface structures, and receive
windows used against the decoder's rules each give a Python exception (never a panic, never a
read of memory that was not written or is out of bounds)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from ferrokafka import _native

from .arrow_c import ArrowArray, capsule_pointer

MB = 1 << 20


def plan(data: Any, partitions: int = 1) -> list[_native.ArrowRecordChunk]:
    batches = data if isinstance(data, list) else [data]
    return _native.plan_arrow_records(
        batches, num_partitions=partitions, sticky=0, batch_size=MB, max_request_size=MB
    )


def test_offsets_changed_after_planning_are_refused_when_encoding() -> None:
    # The caller's writable memory (numpy through pa.py_buffer): checked when planned, then
    # changed to point 4,000 bytes past a 10-byte buffer before the batch is encoded.
    offsets = np.array([0, 5, 10], dtype=np.int32)
    data = np.frombuffer(b"abcdefghij", dtype=np.uint8).copy()
    values = pa.Array.from_buffers(
        pa.binary(), 2, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    (chunk,) = plan(pa.RecordBatch.from_arrays([values], names=["value"]))
    offsets[2] = 4_000
    with pytest.raises(ValueError, match=r"row 1: column \"value\" changed after send_arrow"):
        chunk.encode(0)
    offsets[2] = 10
    offsets[1] = 11  # a row that now ends before it starts
    with pytest.raises(ValueError, match=r"row 0: column \"value\" changed"):
        chunk.encode(0)
    offsets[1] = 5
    assert len(chunk.encode(0)) > 0


def test_header_list_offsets_changed_after_planning_are_refused() -> None:
    entries = pa.array(
        [{"key": "h", "value": b"1"}], pa.struct([("key", pa.string()), ("value", pa.binary())])
    )
    list_offsets = np.array([0, 1], dtype=np.int32)
    headers = pa.ListArray.from_buffers(
        pa.list_(entries.type), 1, [None, pa.py_buffer(list_offsets)], children=[entries]
    )
    batch = pa.RecordBatch.from_arrays([pa.array([b"v"]), headers], names=["value", "headers"])
    (chunk,) = plan(batch)
    list_offsets[1] = 1_000
    with pytest.raises(ValueError, match=r"row 0: column \"headers\" changed"):
        chunk.encode(0)


def test_a_null_record_row_is_a_value_error_naming_it() -> None:
    rows = pa.array([{"value": b"x"}, None, {"value": b"y"}])
    with pytest.raises(ValueError, match="row 1: the record is null"):
        plan(rows)
    # Numbered across the batches of one send.
    first = pa.record_batch({"value": pa.array([b"a", b"b"])})
    with pytest.raises(ValueError, match="row 3: the record is null"):
        plan([first, rows])


class Tampered:
    """Exports `batch` as pyarrow does, then sets `field` of its ArrowArray struct (or of its
    first child's) to `value`. `undo()` puts it back, before the exporter's release callback
    (which trusts those fields) runs."""

    def __init__(self, batch: pa.RecordBatch, in_child: bool, field: str, value: Any) -> None:
        self.batch = batch
        self.in_child = in_child
        self.field = field
        self.value = value
        self.undo = lambda: None
        self.capsules: Any = None

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        self.capsules = self.batch.__arrow_c_array__()
        raw = ArrowArray.from_address(capsule_pointer(self.capsules[1], b"arrow_array"))
        target = child(raw, 0) if self.in_child else raw
        if self.field == "offsets":
            saved = target.buffers[1]
            target.buffers[1] = None
            self.undo = lambda: target.buffers.__setitem__(1, saved)
        else:
            saved = getattr(target, self.field)
            setattr(target, self.field, self.value)
            self.undo = lambda: setattr(target, self.field, saved)
        return self.capsules


def child(raw: ArrowArray, i: int) -> ArrowArray:
    return ArrowArray.from_address(raw.children[i])


@pytest.mark.parametrize(
    ("in_child", "field", "value", "error"),
    [
        (False, "n_children", 2, "has 2 children"),
        (False, "n_buffers", 0, "has 0 buffers"),
        (False, "offset", 1, "reaches row 3"),
        (True, "offsets", None, "has no offsets"),
        (True, "n_buffers", 2, "has 2 buffers"),
        (True, "length", -3, "has length -3"),
        (True, "null_count", 7, "has 7 nulls"),
    ],
)
def test_malformed_exported_structures_are_errors_not_panics(
    in_child: bool, field: str, value: Any, error: str
) -> None:
    batch = pa.record_batch({"value": pa.array([b"a", b"bc"])})
    tampered = Tampered(batch, in_child, field, value)
    with pytest.raises(ValueError, match=error):
        plan(tampered)
    tampered.undo()
    tampered.capsules = None
    # The module still works afterwards.
    assert plan(batch)[0].record_count == 2


def test_an_unsupported_column_type_is_a_type_error() -> None:
    batch = pa.record_batch({"value": pa.array(["a", "b"]).dictionary_encode()})
    with pytest.raises(TypeError, match='column "value"'):
        plan(batch)


def frame_head(size: int, body: bytes) -> bytes:
    return struct.pack(">i", size) + body


def test_claiming_more_bytes_than_were_written_shows_zeros_not_old_memory() -> None:
    # Frames of old data freed just before: the heap the next frame comes from.
    for _ in range(3):
        old = _native._FrameDecoder()
        old.feed(frame_head(200_000, b"A" * 200_000))
    decoder = _native._FrameDecoder()
    assert decoder.feed(frame_head(200_000, b"xy")) == []
    window = decoder.receive_window()
    assert window is not None
    size = len(window)
    window.release()
    (frame,) = decoder.received(size, True, bytearray(16))
    assert bytes(frame) == b"xy" + bytes(size)


def test_a_frame_waits_for_its_window_and_the_window_is_closed_once_it_is_handed_out() -> None:
    decoder = _native._FrameDecoder()
    decoder.feed(frame_head(100_000, b""))
    window = decoder.receive_window()
    assert window is not None
    window[:4] = b"AAAA"
    # Still exported (as uvloop holds it until buffer_updated returns): the complete frame is
    # held, not handed out, since its bytes could still change.
    assert decoder.received(len(window), True, bytearray(16)) == []
    assert decoder.held
    assert decoder.take() == []
    owner = window.obj
    window.release()
    assert not decoder.held
    (frame,) = decoder.take()
    assert bytes(frame)[:4] == b"AAAA"
    # The window's object exports no buffer any more: the frame cannot be written through it.
    with pytest.raises(BufferError, match="closed"):
        memoryview(owner)
    assert bytes(frame)[:4] == b"AAAA"


def test_frames_after_a_held_one_keep_their_order() -> None:
    decoder = _native._FrameDecoder(direct_min=1000)
    decoder.feed(frame_head(2000, b""))
    window = decoder.receive_window()
    assert window is not None
    window[:] = b"B" * 2000
    assert decoder.received(2000, True, bytearray(16)) == []
    assert decoder.feed(frame_head(3, b"abc")) == []
    window.release()
    assert [bytes(f) for f in decoder.take()] == [b"B" * 2000, b"abc"]


def test_an_earlier_window_is_closed_when_a_new_one_is_handed_out() -> None:
    decoder = _native._FrameDecoder()
    decoder.feed(frame_head(100_000, b""))
    first = decoder.receive_window()
    assert first is not None
    owner = first.obj
    first.release()
    second = decoder.receive_window()
    assert second is not None
    with pytest.raises(BufferError, match="closed"):
        memoryview(owner)
    second.release()


def test_the_window_itself_is_refused_as_scratch() -> None:
    decoder = _native._FrameDecoder()
    decoder.feed(frame_head(100_000, b"z" * 10))
    window = decoder.receive_window()
    assert window is not None
    with pytest.raises(ValueError, match="overlaps the frame being received"):
        decoder.received(10, False, window)  # type: ignore[arg-type]
    window.release()
    with pytest.raises(ValueError):
        decoder.received(10, False, window)  # type: ignore[arg-type]


def test_the_frame_decoder_is_private() -> None:
    assert not hasattr(_native, "FrameDecoder")
