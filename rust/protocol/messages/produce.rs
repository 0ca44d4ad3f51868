//! Produce (key 0): append record batches to partition leaders.
//!
//! Versions 3-12 by name (3 is Kafka 4.x's floor, KIP-896; 9 flexible; 10 current-leader hints
//! and node endpoints, KIP-951); 13 addresses topics by id (KIP-516, Kafka 4.1+).

use serde_bytes::ByteBuf;

use super::common::{LeaderIdAndEpoch, NodeEndpoint};
use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct Produce;

impl Api for Produce {
    const NAME: &'static str = "Produce";
    const KEY: i16 = 0;
    const MIN_VERSION: i16 = 3;
    const MAX_VERSION: i16 = 13;
    const FIRST_FLEXIBLE: i16 = 9;
    type Request = ProduceRequest;
    type Response = ProduceResponse;
}

kafka_struct! {
    pub struct PartitionProduceData {
        index: i32 [0, _],
        records: Option<ByteBuf> [0, _],
    }
}

kafka_struct! {
    pub struct TopicProduceData {
        name: String [0, 12],
        topic_id: Uuid [13, _],
        partition_data: Vec<PartitionProduceData> [0, _],
    }
}

kafka_struct! {
    pub struct ProduceRequest {
        transactional_id: Option<String> [3, _],
        acks: i16 [0, _],
        timeout_ms: i32 [0, _],
        topic_data: Vec<TopicProduceData> [0, _],
    }
}

kafka_struct! {
    pub struct BatchIndexAndErrorMessage {
        batch_index: i32 [8, _],
        batch_index_error_message: Option<String> [8, _],
    }
}

kafka_struct! {
    pub struct PartitionProduceResponse {
        index: i32 [0, _],
        error_code: i16 [0, _],
        base_offset: i64 [0, _],
        log_append_time_ms: i64 [2, _] = -1,
        log_start_offset: i64 [5, _] = -1,
        record_errors: Vec<BatchIndexAndErrorMessage> [8, _],
        error_message: Option<String> [8, _],
    }
    tagged {
        current_leader: LeaderIdAndEpoch = 0 [10, _],
    }
}

kafka_struct! {
    pub struct TopicProduceResponse {
        name: String [0, 12],
        topic_id: Uuid [13, _],
        partition_responses: Vec<PartitionProduceResponse> [0, _],
    }
}

kafka_struct! {
    pub struct ProduceResponse {
        responses: Vec<TopicProduceResponse> [0, _],
        throttle_time_ms: i32 [1, _],
    }
    tagged {
        node_endpoints: Vec<NodeEndpoint> = 0 [10, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(version: i16, records: Vec<u8>, txn: Option<String>) -> ProduceRequest {
        ProduceRequest {
            transactional_id: txn,
            acks: -1,
            timeout_ms: 30000,
            topic_data: vec![TopicProduceData {
                name: if version <= 12 {
                    "t".into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid([3; 16])
                } else {
                    Uuid::default()
                },
                partition_data: vec![PartitionProduceData {
                    index: 1,
                    records: Some(ByteBuf::from(records)),
                }],
            }],
        }
    }

    fn response(version: i16, base_offset: i64) -> ProduceResponse {
        ProduceResponse {
            responses: vec![TopicProduceResponse {
                name: if version <= 12 {
                    "t".into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid([3; 16])
                } else {
                    Uuid::default()
                },
                partition_responses: vec![PartitionProduceResponse {
                    index: 1,
                    error_code: 0,
                    base_offset,
                    log_append_time_ms: -1,
                    log_start_offset: if version >= 5 { 0 } else { -1 },
                    record_errors: if version >= 8 {
                        vec![BatchIndexAndErrorMessage {
                            batch_index: 0,
                            batch_index_error_message: None,
                        }]
                    } else {
                        vec![]
                    },
                    error_message: None,
                    current_leader: (version >= 10).then_some(LeaderIdAndEpoch {
                        leader_id: 1,
                        leader_epoch: 2,
                    }),
                }],
            }],
            throttle_time_ms: 0,
            node_endpoints: None,
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            version in 3i16..=13,
            records in proptest::collection::vec(any::<u8>(), 0..200),
            txn in proptest::option::of("[a-z]{1,10}"),
            base_offset in any::<i64>(),
        ) {
            assert_round_trip::<Produce>(version, &request(version, records, txn), &response(version, base_offset));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for version in 3..=13 {
            assert_truncations_fail::<Produce>(version, &response(version, 42));
        }
    }
}
