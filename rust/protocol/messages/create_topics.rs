//! CreateTopics (key 19): create topics (partitions, replication, assignments, configs).
//! In KRaft any broker forwards it to the controller (KIP-590).
//!
//! Versions 2-7: v2 is Kafka 4.x's floor; 5 flexible and echoes the resulting configs,
//! partition count and replication factor; 7 returns topic ids.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct CreateTopics;

impl Api for CreateTopics {
    const NAME: &'static str = "CreateTopics";
    const KEY: i16 = 19;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 7;
    const FIRST_FLEXIBLE: i16 = 5;
    type Request = CreateTopicsRequest;
    type Response = CreateTopicsResponse;
}

kafka_struct! {
    pub struct CreatableReplicaAssignment {
        partition_index: i32 [0, _],
        broker_ids: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct CreatableTopicConfig {
        name: String [0, _],
        value: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct CreatableTopic {
        name: String [0, _],
        num_partitions: i32 [0, _],
        replication_factor: i16 [0, _],
        assignments: Vec<CreatableReplicaAssignment> [0, _],
        configs: Vec<CreatableTopicConfig> [0, _],
    }
}

kafka_struct! {
    pub struct CreateTopicsRequest {
        topics: Vec<CreatableTopic> [0, _],
        timeout_ms: i32 [0, _] = 60000,
        validate_only: bool [1, _],
    }
}

kafka_struct! {
    pub struct CreatableTopicConfigs {
        name: String [5, _],
        value: Option<String> [5, _],
        read_only: bool [5, _],
        config_source: i8 [5, _] = -1,
        is_sensitive: bool [5, _],
    }
}

kafka_struct! {
    pub struct CreatableTopicResult {
        name: String [0, _],
        topic_id: Uuid [7, _],
        error_code: i16 [0, _],
        error_message: Option<String> [1, _],
        num_partitions: i32 [5, _] = -1,
        replication_factor: i16 [5, _] = -1,
        configs: Option<Vec<CreatableTopicConfigs>> [5, _],
    }
    tagged {
        topic_config_error_code: i16 = 0 [5, _],
    }
}

kafka_struct! {
    pub struct CreateTopicsResponse {
        throttle_time_ms: i32 [2, _],
        topics: Vec<CreatableTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, name: &str, code: i16, cfg_err: Option<i16>) -> CreateTopicsResponse {
        CreateTopicsResponse {
            throttle_time_ms: 0,
            topics: vec![CreatableTopicResult {
                name: name.into(),
                topic_id: if v >= 7 {
                    Uuid([1; 16])
                } else {
                    Uuid::default()
                },
                error_code: code,
                error_message: Some("m".into()),
                num_partitions: if v >= 5 { 3 } else { -1 },
                replication_factor: if v >= 5 { 1 } else { -1 },
                configs: (v >= 5).then(|| {
                    vec![CreatableTopicConfigs {
                        name: "cleanup.policy".into(),
                        value: Some("delete".into()),
                        read_only: false,
                        config_source: 5,
                        is_sensitive: false,
                    }]
                }),
                topic_config_error_code: if v >= 5 { cfg_err } else { None },
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 2i16..=7,
            name in "[a-z]{1,20}",
            parts in -1i32..100,
            rf in -1i16..4,
            code in any::<i16>(),
            cfg_err in proptest::option::of(any::<i16>()),
            value in proptest::option::of("[a-z0-9]{0,8}"),
            validate: bool,
        ) {
            let request = CreateTopicsRequest {
                topics: vec![CreatableTopic {
                    name: name.clone(),
                    num_partitions: parts,
                    replication_factor: rf,
                    assignments: vec![CreatableReplicaAssignment { partition_index: 0, broker_ids: vec![1, 2] }],
                    configs: vec![CreatableTopicConfig { name: "retention.ms".into(), value }],
                }],
                timeout_ms: 1000,
                validate_only: validate,
            };
            assert_round_trip::<CreateTopics>(v, &request, &response(v, &name, code, cfg_err));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 2..=7 {
            assert_truncations_fail::<CreateTopics>(v, &response(v, "t", 36, Some(1)));
        }
    }
}
