"""KIP-227 fetch sessions on their own: what each request of a session carries."""

from __future__ import annotations

from ferrokafka.consumer.fetch_session import MAX_EPOCH, FetchKey, FetchSession
from ferrokafka.structs import TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
IDS = {"a": b"A" * 16, "b": b"B" * 16}


def key(offset: int, epoch: int = 3) -> FetchKey:
    return FetchKey(offset, epoch, epoch, 1 << 20)


def body(
    session: FetchSession,
    send: dict[TopicPartition, FetchKey],
    forget: list[TopicPartition],
    version: int = 13,
) -> dict[str, object]:
    return session.request(
        send,
        forget,
        IDS,
        version,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=50 << 20,
        isolation_level=1,
        rack_id="r1",
    )


def test_a_session_sends_only_what_changed_and_forgets_what_is_gone() -> None:
    session = FetchSession()
    wanted = {A0: key(10), A1: key(20), B0: key(30)}
    send, forget = session.build(wanted)
    assert send == wanted and forget == [] and session.full  # the first request is full
    session.succeeded(77, wanted)
    assert (session.session_id, session.epoch, session.full) == (77, 1, False)
    # Nothing changed: an empty incremental request.
    assert session.build(wanted) == ({}, [])
    # A0 moved on, B0 is no longer wanted.
    nxt = {A0: key(15), A1: key(20)}
    send, forget = session.build(nxt)
    assert send == {A0: key(15)} and forget == [B0]
    session.succeeded(77, nxt)
    assert session.epoch == 2
    # A new leader epoch is a change too.
    assert session.build({A0: key(15, epoch=4), A1: key(20)})[0] == {A0: key(15, epoch=4)}


def test_no_session_from_the_broker_and_resets_mean_full_requests() -> None:
    session = FetchSession()
    wanted = {A0: key(1)}
    session.succeeded(0, wanted)  # the broker declined a session
    assert session.full and session.build(wanted) == (wanted, [])
    session.succeeded(5, wanted)
    assert not session.full
    session.reset()
    assert session.full and (session.session_id, session.epoch) == (0, 0)
    assert session.build(wanted) == (wanted, [])


def test_the_epoch_wraps_to_one() -> None:
    session = FetchSession()
    session.succeeded(9, {A0: key(1)})
    session.epoch = MAX_EPOCH
    session.succeeded(9, {A0: key(2)})
    assert session.epoch == 1


def test_request_bodies_name_topics_by_id_from_version_13() -> None:
    session = FetchSession()
    session.succeeded(77, {A0: key(1), B0: key(2)})
    with_ids = body(session, {A0: key(5)}, [B0])
    assert with_ids["session_id"] == 77 and with_ids["session_epoch"] == 1
    assert with_ids["topics"] == [
        {
            "topic_id": IDS["a"],
            "partitions": [
                {
                    "partition": 0,
                    "current_leader_epoch": 3,
                    "fetch_offset": 5,
                    "last_fetched_epoch": 3,
                    "log_start_offset": -1,
                    "partition_max_bytes": 1 << 20,
                }
            ],
        }
    ]
    assert with_ids["forgotten_topics_data"] == [{"topic_id": IDS["b"], "partitions": [0]}]
    assert (with_ids["isolation_level"], with_ids["rack_id"], with_ids["max_wait_ms"]) == (
        1,
        "r1",
        500,
    )
    by_name = body(session, {A0: key(5), A1: key(6)}, [], version=12)
    assert by_name["topics"][0]["topic"] == "a"  # type: ignore[index]
    assert [p["partition"] for p in by_name["topics"][0]["partitions"]] == [0, 1]  # type: ignore[index]
