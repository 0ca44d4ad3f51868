//! AddPartitionsToTxn (key 24): a transactional producer names the partitions it is about to
//! write, before its first Produce to each in a transaction.
//!
//! Versions 0-3 (the client's; 4-5 are broker to broker, batching transactions): 1 same as 0;
//! 2 PRODUCER_FENCED; 3 flexible.

use super::Api;
use crate::kafka_struct;

pub struct AddPartitionsToTxn;

impl Api for AddPartitionsToTxn {
    const NAME: &'static str = "AddPartitionsToTxn";
    const KEY: i16 = 24;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 3;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = AddPartitionsToTxnRequest;
    type Response = AddPartitionsToTxnResponse;
}

kafka_struct! {
    pub struct AddPartitionsToTxnTopic {
        name: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct AddPartitionsToTxnRequest {
        transactional_id: String [0, _],
        producer_id: i64 [0, _],
        producer_epoch: i16 [0, _],
        topics: Vec<AddPartitionsToTxnTopic> [0, _],
    }
}

kafka_struct! {
    pub struct AddPartitionsToTxnPartitionResult {
        partition_index: i32 [0, _],
        partition_error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct AddPartitionsToTxnTopicResult {
        name: String [0, _],
        results_by_partition: Vec<AddPartitionsToTxnPartitionResult> [0, _],
    }
}

kafka_struct! {
    pub struct AddPartitionsToTxnResponse {
        throttle_time_ms: i32 [0, _],
        results_by_topic: Vec<AddPartitionsToTxnTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(partitions: Vec<i32>) -> AddPartitionsToTxnRequest {
        AddPartitionsToTxnRequest {
            transactional_id: "tx".into(),
            producer_id: 7,
            producer_epoch: 1,
            topics: vec![AddPartitionsToTxnTopic {
                name: "t".into(),
                partitions,
            }],
        }
    }

    fn response(codes: &[i16]) -> AddPartitionsToTxnResponse {
        AddPartitionsToTxnResponse {
            throttle_time_ms: 0,
            results_by_topic: vec![AddPartitionsToTxnTopicResult {
                name: "t".into(),
                results_by_partition: codes
                    .iter()
                    .enumerate()
                    .map(|(i, &code)| AddPartitionsToTxnPartitionResult {
                        partition_index: i as i32,
                        partition_error_code: code,
                    })
                    .collect(),
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=3,
            partitions in proptest::collection::vec(0i32..1000, 0..5),
            codes in proptest::collection::vec(0i16..100, 0..5),
        ) {
            assert_round_trip::<AddPartitionsToTxn>(v, &request(partitions), &response(&codes));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=3 {
            assert_truncations_fail::<AddPartitionsToTxn>(v, &response(&[0, 48]));
        }
    }

    #[test]
    fn request_bytes() {
        // v0: "tx", producer id 7, epoch 1, [ "t", [ 2 ] ].
        let frame = encode_request::<AddPartitionsToTxn>(0, 0, None, &request(vec![2])).unwrap();
        let mut want = vec![0, 2, b't', b'x', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1];
        want.extend([0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 2]);
        assert_eq!(&frame[14..], &want[..]);
        // v3: header tags, compact strings and arrays, a tag section per struct.
        let frame = encode_request::<AddPartitionsToTxn>(3, 0, None, &request(vec![2])).unwrap();
        let mut want = vec![0, 3, b't', b'x', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1];
        want.extend([2, 2, b't', 2, 0, 0, 0, 2, 0, 0]);
        assert_eq!(&frame[14..], &want[..]);
    }
}
