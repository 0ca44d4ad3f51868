"""``delete_consumer_groups`` against the in-process fake peer: answers a real broker does not
give on cue (a coordinator that moved, an answer that leaves a group out)."""

from __future__ import annotations

from typing import Any

from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.protocol import ApiKey

from .fake_broker import FakeBroker, metadata_reply


async def test_a_moved_coordinator_is_retried_and_a_group_left_out_is_unknown() -> None:
    delete_answers: list[dict[str, int]] = [
        # "moved": NOT_COORDINATOR; "missing" is not in the answer at all.
        {"moved": Errors.NotCoordinatorError.errno, "gone": 0},
        {"moved": 0},
    ]
    broker: FakeBroker | None = None

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        assert broker is not None
        reply: dict[str, Any]
        if key == ApiKey.METADATA:
            reply = metadata_reply(broker.port, "t", 1)
        elif key == ApiKey.FIND_COORDINATOR:
            answer = {"node_id": 1, "host": "127.0.0.1", "port": broker.port}
            answer |= {"error_code": 0, "error_message": None}
            if version >= 4:
                reply = {"coordinators": [dict(answer, key=k) for k in body["coordinator_keys"]]}
            else:
                reply = answer
        elif key == ApiKey.DELETE_GROUPS:
            codes = delete_answers.pop(0)
            reply = {
                "throttle_time_ms": 0,
                "results": [
                    {"group_id": g, "error_code": codes[g]}
                    for g in body["groups_names"]
                    if g in codes
                ],
            }
        else:
            raise AssertionError(f"unexpected request {key}")
        return _native.encode_response(key, version, corr, reply)

    broker = await FakeBroker(handle).start()
    admin = AIOKafkaAdminClient(bootstrap_servers=f"127.0.0.1:{broker.port}", retry_backoff_ms=10)
    try:
        await admin.start()
        results = await admin.delete_consumer_groups(["moved", "missing", "gone", "moved"])
    finally:
        await admin.close()
        await broker.stop()
    assert results == [
        ("moved", Errors.NoError),
        ("missing", Errors.UnknownError),  # not known to be deleted
        ("gone", Errors.NoError),
    ]
    sent = [body["groups_names"] for k, _, _, body in broker.requests if k == ApiKey.DELETE_GROUPS]
    # Only the group whose coordinator moved goes again; "missing" is settled (not retriable).
    assert [sorted(s) for s in sent] == [["gone", "missing", "moved"], ["moved"]]
    asked = [k for k, _, _, _ in broker.requests if k == ApiKey.FIND_COORDINATOR]
    assert len(asked) >= 4  # "moved" looked up again after NOT_COORDINATOR
