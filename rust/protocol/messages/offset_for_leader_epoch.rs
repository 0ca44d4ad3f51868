//! OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, to detect log truncation
//! after a leader change (KIP-320).
//!
//! Versions 2-4: v2 is Kafka 4.x's floor (v0-1 were removed) and carries the current leader
//! epoch; 3 `replica_id` (-2 for consumers); 4 flexible.

use super::Api;
use crate::kafka_struct;

pub struct OffsetForLeaderEpoch;

impl Api for OffsetForLeaderEpoch {
    const NAME: &'static str = "OffsetForLeaderEpoch";
    const KEY: i16 = 23;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 4;
    type Request = OffsetForLeaderEpochRequest;
    type Response = OffsetForLeaderEpochResponse;
}

kafka_struct! {
    pub struct OffsetForLeaderPartition {
        partition: i32 [0, _],
        current_leader_epoch: i32 [2, _] = -1,
        leader_epoch: i32 [0, _],
    }
}

kafka_struct! {
    pub struct OffsetForLeaderTopic {
        topic: String [0, _],
        partitions: Vec<OffsetForLeaderPartition> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetForLeaderEpochRequest {
        replica_id: i32 [3, _] = -2,
        topics: Vec<OffsetForLeaderTopic> [0, _],
    }
}

kafka_struct! {
    pub struct EpochEndOffset {
        error_code: i16 [0, _],
        partition: i32 [0, _],
        leader_epoch: i32 [1, _] = -1,
        end_offset: i64 [0, _] = -1,
    }
}

kafka_struct! {
    pub struct OffsetForLeaderTopicResult {
        topic: String [0, _],
        partitions: Vec<EpochEndOffset> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetForLeaderEpochResponse {
        throttle_time_ms: i32 [2, _],
        topics: Vec<OffsetForLeaderTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(end: i64, epoch: i32) -> OffsetForLeaderEpochResponse {
        OffsetForLeaderEpochResponse {
            throttle_time_ms: 3,
            topics: vec![OffsetForLeaderTopicResult {
                topic: "t".into(),
                partitions: vec![EpochEndOffset {
                    error_code: 0,
                    partition: 1,
                    leader_epoch: epoch,
                    end_offset: end,
                }],
            }],
        }
    }

    fn request(current: i32, epoch: i32) -> OffsetForLeaderEpochRequest {
        OffsetForLeaderEpochRequest {
            replica_id: -2,
            topics: vec![OffsetForLeaderTopic {
                topic: "t".into(),
                partitions: vec![OffsetForLeaderPartition {
                    partition: 1,
                    current_leader_epoch: current,
                    leader_epoch: epoch,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 2i16..=4, current: i32, epoch: i32, end: i64) {
            assert_round_trip::<OffsetForLeaderEpoch>(v, &request(current, epoch), &response(end, epoch));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 2..=4 {
            assert_truncations_fail::<OffsetForLeaderEpoch>(v, &response(10, 1));
        }
    }

    #[test]
    fn request_bytes() {
        #[rustfmt::skip]
        let v2: &[u8] = &[
            0, 0, 0, 1, 0, 1, b't',   // topics [ "t"
            0, 0, 0, 1, 0, 0, 0, 1,   //   partitions [ 1
            0, 0, 0, 5, 0, 0, 0, 4,   //   current epoch 5, epoch 4
        ];
        let frame = encode_request::<OffsetForLeaderEpoch>(2, 0, None, &request(5, 4)).unwrap();
        assert_eq!(&frame[14..], v2);
        #[rustfmt::skip]
        let v4: &[u8] = &[
            0,                        // header tags
            0xff, 0xff, 0xff, 0xfe,   // replica_id -2 (a consumer)
            2, 2, b't',               // topics [ "t"
            2, 0, 0, 0, 1,            //   partitions [ 1
            0, 0, 0, 5, 0, 0, 0, 4,   //   current epoch 5, epoch 4
            0, 0, 0,                  // partition, topic, request tags
        ];
        let frame = encode_request::<OffsetForLeaderEpoch>(4, 0, None, &request(5, 4)).unwrap();
        assert_eq!(&frame[14..], v4);
    }
}
