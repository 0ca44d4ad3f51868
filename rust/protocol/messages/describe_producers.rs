//! DescribeProducers (key 61): the producers with state in partitions (id, epoch, last
//! sequence and timestamp, the open transaction's first offset). The partition leader answers.
//!
//! Version 0 only (flexible).

use super::Api;
use crate::kafka_struct;

pub struct DescribeProducers;

impl Api for DescribeProducers {
    const NAME: &'static str = "DescribeProducers";
    const KEY: i16 = 61;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DescribeProducersRequest;
    type Response = DescribeProducersResponse;
}

kafka_struct! {
    pub struct DescribeProducersTopic {
        name: String [0, _],
        partition_indexes: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeProducersRequest {
        topics: Vec<DescribeProducersTopic> [0, _],
    }
}

kafka_struct! {
    pub struct ProducerState {
        producer_id: i64 [0, _],
        producer_epoch: i32 [0, _],
        last_sequence: i32 [0, _] = -1,
        last_timestamp: i64 [0, _] = -1,
        coordinator_epoch: i32 [0, _],
        current_txn_start_offset: i64 [0, _] = -1,
    }
}

kafka_struct! {
    pub struct DescribeProducersPartition {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        active_producers: Vec<ProducerState> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeProducersTopicResponse {
        name: String [0, _],
        partitions: Vec<DescribeProducersPartition> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeProducersResponse {
        throttle_time_ms: i32 [0, _],
        topics: Vec<DescribeProducersTopicResponse> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(id: i64, epoch: i32, start: i64) -> DescribeProducersResponse {
        DescribeProducersResponse {
            throttle_time_ms: 0,
            topics: vec![DescribeProducersTopicResponse {
                name: "t".into(),
                partitions: vec![DescribeProducersPartition {
                    partition_index: 0,
                    error_code: 0,
                    error_message: None,
                    active_producers: vec![ProducerState {
                        producer_id: id,
                        producer_epoch: epoch,
                        last_sequence: 4,
                        last_timestamp: 1_700_000_000_000,
                        coordinator_epoch: 2,
                        current_txn_start_offset: start,
                    }],
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(id: i64, epoch: i32, start: i64, partitions in proptest::collection::vec(any::<i32>(), 0..4)) {
            let request = DescribeProducersRequest {
                topics: vec![DescribeProducersTopic { name: "t".into(), partition_indexes: partitions }],
            };
            assert_round_trip::<DescribeProducers>(0, &request, &response(id, epoch, start));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<DescribeProducers>(0, &response(7, 1, -1));
    }

    #[test]
    fn request_bytes() {
        let request = DescribeProducersRequest {
            topics: vec![DescribeProducersTopic {
                name: "t".into(),
                partition_indexes: vec![1],
            }],
        };
        let frame = encode_request::<DescribeProducers>(0, 0, None, &request).unwrap();
        // header tags, topics [ "t" [ 1 ] tags ] tags
        assert_eq!(&frame[14..], &[0, 2, 2, b't', 2, 0, 0, 0, 1, 0, 0]);
    }
}
