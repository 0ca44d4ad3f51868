//! DescribeTopicPartitions (key 75, KIP-966): topics with their ids and each partition's
//! leader, leader epoch, replicas, ISR, eligible leader replicas and offline replicas, in pages
//! of at most `response_partition_limit` partitions; `next_cursor` names where the next page
//! starts. Any broker answers.
//!
//! Version 0 only (flexible).

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::{Reader, Uuid, Version, Wire};
use crate::protocol::error::Result;

pub struct DescribeTopicPartitions;

impl Api for DescribeTopicPartitions {
    const NAME: &'static str = "DescribeTopicPartitions";
    const KEY: i16 = 75;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DescribeTopicPartitionsRequest;
    type Response = DescribeTopicPartitionsResponse;
}

kafka_struct! {
    pub struct DescribeTopicPartitionsTopic {
        name: String [0, _],
    }
}

kafka_struct! {
    /// Where a page starts: a topic and its first partition in the page.
    pub struct TopicPartitionsCursor {
        topic_name: String [0, _],
        partition_index: i32 [0, _],
    }
}

/// A nullable struct: an int8 marker (-1 null, 1 present) before the struct itself.
impl Wire for Option<TopicPartitionsCursor> {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        if r.i8()? < 0 {
            return Ok(None);
        }
        TopicPartitionsCursor::read(r, v).map(Some)
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        match self {
            None => w.push(0xff),
            Some(c) => {
                w.push(1);
                c.write(w, v);
            }
        }
    }
}

kafka_struct! {
    /// `topics` empty: every topic, in name order.
    pub struct DescribeTopicPartitionsRequest {
        topics: Vec<DescribeTopicPartitionsTopic> [0, _],
        response_partition_limit: i32 [0, _] = 2000,
        cursor: Option<TopicPartitionsCursor> [0, _],
    }
}

kafka_struct! {
    pub struct DescribedTopicPartition {
        error_code: i16 [0, _],
        partition_index: i32 [0, _],
        leader_id: i32 [0, _],
        leader_epoch: i32 [0, _] = -1,
        replica_nodes: Vec<i32> [0, _],
        isr_nodes: Vec<i32> [0, _],
        eligible_leader_replicas: Option<Vec<i32>> [0, _],
        last_known_elr: Option<Vec<i32>> [0, _],
        offline_replicas: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct DescribedTopic {
        error_code: i16 [0, _],
        name: Option<String> [0, _],
        topic_id: Uuid [0, _],
        is_internal: bool [0, _],
        partitions: Vec<DescribedTopicPartition> [0, _],
        topic_authorized_operations: i32 [0, _] = i32::MIN,
    }
}

kafka_struct! {
    pub struct DescribeTopicPartitionsResponse {
        throttle_time_ms: i32 [0, _],
        topics: Vec<DescribedTopic> [0, _],
        next_cursor: Option<TopicPartitionsCursor> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(elr: Option<Vec<i32>>, next: Option<i32>) -> DescribeTopicPartitionsResponse {
        DescribeTopicPartitionsResponse {
            throttle_time_ms: 0,
            topics: vec![DescribedTopic {
                error_code: 0,
                name: Some("t".into()),
                topic_id: Uuid([7; 16]),
                is_internal: false,
                partitions: vec![DescribedTopicPartition {
                    error_code: 0,
                    partition_index: 0,
                    leader_id: 1,
                    leader_epoch: 4,
                    replica_nodes: vec![1, 2],
                    isr_nodes: vec![1],
                    eligible_leader_replicas: elr.clone(),
                    last_known_elr: elr,
                    offline_replicas: vec![],
                }],
                topic_authorized_operations: i32::MIN,
            }],
            next_cursor: next.map(|p| TopicPartitionsCursor {
                topic_name: "t".into(),
                partition_index: p,
            }),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            limit: i32,
            cursor in proptest::option::of(any::<i32>()),
            elr in proptest::option::of(proptest::collection::vec(0i32..5, 0..3)),
            next in proptest::option::of(any::<i32>()),
        ) {
            let request = DescribeTopicPartitionsRequest {
                topics: vec![DescribeTopicPartitionsTopic { name: "t".into() }],
                response_partition_limit: limit,
                cursor: cursor.map(|p| TopicPartitionsCursor { topic_name: "t".into(), partition_index: p }),
            };
            assert_round_trip::<DescribeTopicPartitions>(0, &request, &response(elr, next));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<DescribeTopicPartitions>(0, &response(Some(vec![2]), Some(3)));
        assert_truncations_fail::<DescribeTopicPartitions>(0, &response(None, None));
    }

    #[test]
    fn request_bytes() {
        let request = DescribeTopicPartitionsRequest {
            topics: vec![DescribeTopicPartitionsTopic { name: "t".into() }],
            response_partition_limit: 2,
            cursor: Some(TopicPartitionsCursor {
                topic_name: "t".into(),
                partition_index: 1,
            }),
        };
        let frame = encode_request::<DescribeTopicPartitions>(0, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 2, 2, b't', 0,           // header tags, topics [ "t" tags ]
            0, 0, 0, 2,                 // limit 2
            1, 2, b't', 0, 0, 0, 1, 0,  // cursor present: "t" 1, tags
            0,                          // body tags
        ];
        assert_eq!(&frame[14..], v0);
    }
}
