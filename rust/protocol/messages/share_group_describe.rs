//! ShareGroupDescribe (key 77): a share group's state, epochs and members with their
//! assignments (KIP-932), asked of the group's coordinator.
//!
//! Version 1 only, flexible (Kafka 4.1+; version 0 was the early-access one). The assignment
//! shape is ConsumerGroupDescribe's.

use super::common::Assignment;
use super::Api;
use crate::kafka_struct;

pub struct ShareGroupDescribe;

impl Api for ShareGroupDescribe {
    const NAME: &'static str = "ShareGroupDescribe";
    const KEY: i16 = 77;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ShareGroupDescribeRequest;
    type Response = ShareGroupDescribeResponse;
}

kafka_struct! {
    pub struct ShareGroupDescribeRequest {
        group_ids: Vec<String> [0, _],
        include_authorized_operations: bool [0, _],
    }
}

kafka_struct! {
    pub struct ShareGroupMember {
        member_id: String [0, _],
        rack_id: Option<String> [0, _],
        member_epoch: i32 [0, _],
        client_id: String [0, _],
        client_host: String [0, _],
        subscribed_topic_names: Vec<String> [0, _],
        assignment: Assignment [0, _],
    }
}

kafka_struct! {
    pub struct DescribedShareGroup {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        group_id: String [0, _],
        group_state: String [0, _],
        group_epoch: i32 [0, _],
        assignment_epoch: i32 [0, _],
        assignor_name: String [0, _],
        members: Vec<ShareGroupMember> [0, _],
        authorized_operations: i32 [0, _] = i32::MIN,
    }
}

kafka_struct! {
    pub struct ShareGroupDescribeResponse {
        throttle_time_ms: i32 [0, _],
        groups: Vec<DescribedShareGroup> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::TopicPartitions;
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use crate::protocol::codec::Uuid;
    use proptest::prelude::*;

    fn response(epoch: i32, partitions: Vec<i32>) -> ShareGroupDescribeResponse {
        ShareGroupDescribeResponse {
            throttle_time_ms: 0,
            groups: vec![DescribedShareGroup {
                error_code: 0,
                error_message: None,
                group_id: "g".into(),
                group_state: "Stable".into(),
                group_epoch: epoch,
                assignment_epoch: epoch,
                assignor_name: "simple".into(),
                members: vec![ShareGroupMember {
                    member_id: "m".into(),
                    rack_id: None,
                    member_epoch: epoch,
                    client_id: "c".into(),
                    client_host: "/127.0.0.1".into(),
                    subscribed_topic_names: vec!["t".into()],
                    assignment: Assignment {
                        topic_partitions: vec![TopicPartitions {
                            topic_id: Uuid([2; 16]),
                            topic_name: "t".into(),
                            partitions,
                        }],
                    },
                }],
                authorized_operations: i32::MIN,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            ids in proptest::collection::vec("[a-z]{0,10}", 0..4),
            ops: bool,
            epoch: i32,
            partitions in proptest::collection::vec(any::<i32>(), 0..6),
        ) {
            let request = ShareGroupDescribeRequest { group_ids: ids, include_authorized_operations: ops };
            assert_round_trip::<ShareGroupDescribe>(1, &request, &response(epoch, partitions));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<ShareGroupDescribe>(1, &response(3, vec![0, 1]));
    }

    #[test]
    fn request_bytes() {
        let request = ShareGroupDescribeRequest {
            group_ids: vec!["g".into()],
            include_authorized_operations: false,
        };
        let frame = encode_request::<ShareGroupDescribe>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, b'g', 0, 0]);
    }
}
