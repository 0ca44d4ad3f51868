//! Metadata (key 3): brokers, topics, partitions, leaders and leader epochs.
//!
//! Versions 1-13: v1 is the lowest with nullable topics ("all topics"); 4 adds
//! `allow_auto_topic_creation`; 7 leader epochs (KIP-320); 9 flexible; 10 topic ids; 12 nullable
//! topic names; 13 (Kafka 4.x) a top-level error code. Kafka 3.x speaks up to 12.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct Metadata;

impl Api for Metadata {
    const NAME: &'static str = "Metadata";
    const KEY: i16 = 3;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 13;
    const FIRST_FLEXIBLE: i16 = 9;
    type Request = MetadataRequest;
    type Response = MetadataResponse;
}

kafka_struct! {
    pub struct MetadataRequestTopic {
        topic_id: Uuid [10, _],
        name: Option<String> [0, _],
    }
}

kafka_struct! {
    /// `topics: None` asks for every topic.
    pub struct MetadataRequest {
        topics: Option<Vec<MetadataRequestTopic>> [0, _],
        allow_auto_topic_creation: bool [4, _] = true,
        include_cluster_authorized_operations: bool [8, 10],
        include_topic_authorized_operations: bool [8, _],
    }
}

kafka_struct! {
    pub struct MetadataResponseBroker {
        node_id: i32 [0, _],
        host: String [0, _],
        port: i32 [0, _],
        rack: Option<String> [1, _],
    }
}

kafka_struct! {
    pub struct MetadataResponsePartition {
        error_code: i16 [0, _],
        partition_index: i32 [0, _],
        leader_id: i32 [0, _],
        leader_epoch: i32 [7, _] = -1,
        replica_nodes: Vec<i32> [0, _],
        isr_nodes: Vec<i32> [0, _],
        offline_replicas: Vec<i32> [5, _],
    }
}

kafka_struct! {
    pub struct MetadataResponseTopic {
        error_code: i16 [0, _],
        name: Option<String> [0, _],
        topic_id: Uuid [10, _],
        is_internal: bool [1, _],
        partitions: Vec<MetadataResponsePartition> [0, _],
        topic_authorized_operations: i32 [8, _] = i32::MIN,
    }
}

kafka_struct! {
    pub struct MetadataResponse {
        throttle_time_ms: i32 [3, _],
        brokers: Vec<MetadataResponseBroker> [0, _],
        cluster_id: Option<String> [2, _],
        controller_id: i32 [1, _] = -1,
        topics: Vec<MetadataResponseTopic> [0, _],
        cluster_authorized_operations: i32 [8, 10] = i32::MIN,
        error_code: i16 [13, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(
        v: i16,
        leader_epoch: i32,
        names: &[String],
        rack: Option<String>,
    ) -> MetadataResponse {
        MetadataResponse {
            throttle_time_ms: if v >= 3 { 3 } else { 0 },
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "127.0.0.1".into(),
                port: 9092,
                rack,
            }],
            cluster_id: (v >= 2).then(|| "cluster".to_string()),
            controller_id: 1,
            topics: names
                .iter()
                .map(|n| MetadataResponseTopic {
                    error_code: 0,
                    name: Some(n.clone()),
                    topic_id: if v >= 10 {
                        Uuid([7; 16])
                    } else {
                        Uuid::default()
                    },
                    is_internal: false,
                    partitions: vec![MetadataResponsePartition {
                        error_code: 0,
                        partition_index: 0,
                        leader_id: 1,
                        leader_epoch: if v >= 7 { leader_epoch } else { -1 },
                        replica_nodes: vec![1, 2],
                        isr_nodes: vec![1],
                        offline_replicas: if v >= 5 { vec![2] } else { vec![] },
                    }],
                    topic_authorized_operations: if v >= 8 { 5 } else { i32::MIN },
                })
                .collect(),
            cluster_authorized_operations: if (8..=10).contains(&v) { 7 } else { i32::MIN },
            error_code: 0,
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=13,
            epoch in any::<i32>(),
            names in proptest::collection::vec("[a-z.-]{1,16}", 0..5),
            rack in proptest::option::of("[a-z]{1,5}"),
            all in any::<bool>(),
            auto in any::<bool>(),
        ) {
            let request = MetadataRequest {
                topics: if all { None } else {
                    Some(names.iter().map(|n| MetadataRequestTopic {
                        topic_id: Uuid::default(),
                        name: Some(n.clone()),
                    }).collect())
                },
                allow_auto_topic_creation: if v >= 4 { auto } else { true },
                include_cluster_authorized_operations: (8..=10).contains(&v) && auto,
                include_topic_authorized_operations: v >= 8 && auto,
            };
            let rack = if v >= 1 { rack } else { None };
            assert_round_trip::<Metadata>(v, &request, &response(v, epoch, &names, rack));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=13 {
            assert_truncations_fail::<Metadata>(v, &response(v, 3, &["t".to_string()], None));
        }
    }

    #[test]
    fn request_bytes_classic_and_flexible() {
        let request = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                topic_id: Uuid::default(),
                name: Some("t".into()),
            }]),
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        // v4, header v1 with null client id: 14 bytes, then the body.
        let frame = encode_request::<Metadata>(4, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 0, 0, 1, 0, 1, b't', 0]);
        // v12: header v2 (+1 tagged byte), compact array of 1 (2), uuid (16 zero bytes),
        // compact string "t" (2, 't'), topic tags (0), auto create (0), topic auth ops (0),
        // body tags (0).
        let frame = encode_request::<Metadata>(12, 0, None, &request).unwrap();
        let mut body = vec![2u8];
        body.extend([0u8; 16]);
        body.extend([2, b't', 0, 0, 0, 0]);
        assert_eq!(&frame[15..], &body[..]);
        // Null topics = "all topics": int32 -1 classic, varint 0 compact.
        let all = MetadataRequest::default();
        let frame = encode_request::<Metadata>(4, 0, None, &all).unwrap();
        assert_eq!(&frame[14..], &[0xff, 0xff, 0xff, 0xff, 1]);
    }
}
