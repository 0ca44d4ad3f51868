//! DeleteRecords (key 21): move partitions' log start offset forward (offset -1 = the high
//! watermark); the partition leader answers.
//!
//! Versions 0-2: 1 same as 0; 2 flexible.

use super::Api;
use crate::kafka_struct;

pub struct DeleteRecords;

impl Api for DeleteRecords {
    const NAME: &'static str = "DeleteRecords";
    const KEY: i16 = 21;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = DeleteRecordsRequest;
    type Response = DeleteRecordsResponse;
}

kafka_struct! {
    pub struct DeleteRecordsPartition {
        partition_index: i32 [0, _],
        offset: i64 [0, _],
    }
}

kafka_struct! {
    pub struct DeleteRecordsTopic {
        name: String [0, _],
        partitions: Vec<DeleteRecordsPartition> [0, _],
    }
}

kafka_struct! {
    pub struct DeleteRecordsRequest {
        topics: Vec<DeleteRecordsTopic> [0, _],
        timeout_ms: i32 [0, _] = 60000,
    }
}

kafka_struct! {
    pub struct DeleteRecordsPartitionResult {
        partition_index: i32 [0, _],
        low_watermark: i64 [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct DeleteRecordsTopicResult {
        name: String [0, _],
        partitions: Vec<DeleteRecordsPartitionResult> [0, _],
    }
}

kafka_struct! {
    pub struct DeleteRecordsResponse {
        throttle_time_ms: i32 [0, _],
        topics: Vec<DeleteRecordsTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(low: i64, code: i16) -> DeleteRecordsResponse {
        DeleteRecordsResponse {
            throttle_time_ms: 0,
            topics: vec![DeleteRecordsTopicResult {
                name: "t".into(),
                partitions: vec![DeleteRecordsPartitionResult {
                    partition_index: 0,
                    low_watermark: low,
                    error_code: code,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 0i16..=2, offset: i64, code: i16, partition: i32) {
            let request = DeleteRecordsRequest {
                topics: vec![DeleteRecordsTopic {
                    name: "t".into(),
                    partitions: vec![DeleteRecordsPartition { partition_index: partition, offset }],
                }],
                timeout_ms: 1000,
            };
            assert_round_trip::<DeleteRecords>(v, &request, &response(offset, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=2 {
            assert_truncations_fail::<DeleteRecords>(v, &response(5, 0));
        }
    }

    #[test]
    fn bytes() {
        let request = DeleteRecordsRequest {
            topics: vec![DeleteRecordsTopic {
                name: "t".into(),
                partitions: vec![DeleteRecordsPartition {
                    partition_index: 0,
                    offset: 5,
                }],
            }],
            timeout_ms: 1000,
        };
        #[rustfmt::skip]
        let v2: &[u8] = &[
            0, 2, 2, b't',              // header tags, topics [ "t"
            2, 0, 0, 0, 0,              //   partitions [ 0
            0, 0, 0, 0, 0, 0, 0, 5,     //   offset 5
            0, 0,                       //   partition, topic tags
            0, 0, 0x03, 0xe8, 0,        // timeout 1000, tags
        ];
        let frame = encode_request::<DeleteRecords>(2, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v2);
        #[rustfmt::skip]
        let v0_response: &[u8] = &[
            0, 0, 0, 3,                 // correlation id
            0, 0, 0, 0,                 // throttle
            0, 0, 0, 1, 0, 1, b't',     // topics [ "t"
            0, 0, 0, 1, 0, 0, 0, 0,     //   partitions [ 0
            0, 0, 0, 0, 0, 0, 0, 5,     //   low watermark 5
            0, 0,                       //   no error
        ];
        let (_, r) = decode_response::<DeleteRecords>(0, v0_response).unwrap();
        assert_eq!(r, response(5, 0));
    }
}
