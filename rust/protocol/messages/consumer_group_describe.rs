//! ConsumerGroupDescribe (key 69): state and members of KIP-848 consumer groups (those made
//! with ConsumerGroupHeartbeat; DescribeGroups answers for classic groups).
//!
//! Versions 0-1, all flexible: v1 adds each member's type (classic or consumer protocol).

use super::common::Assignment;
use super::Api;
use crate::kafka_struct;

pub struct ConsumerGroupDescribe;

impl Api for ConsumerGroupDescribe {
    const NAME: &'static str = "ConsumerGroupDescribe";
    const KEY: i16 = 69;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ConsumerGroupDescribeRequest;
    type Response = ConsumerGroupDescribeResponse;
}

kafka_struct! {
    pub struct ConsumerGroupDescribeRequest {
        group_ids: Vec<String> [0, _],
        include_authorized_operations: bool [0, _],
    }
}

kafka_struct! {
    pub struct Member {
        member_id: String [0, _],
        instance_id: Option<String> [0, _],
        rack_id: Option<String> [0, _],
        member_epoch: i32 [0, _],
        client_id: String [0, _],
        client_host: String [0, _],
        subscribed_topic_names: Vec<String> [0, _],
        subscribed_topic_regex: Option<String> [0, _],
        assignment: Assignment [0, _],
        target_assignment: Assignment [0, _],
        member_type: i8 [1, _] = -1,
    }
}

kafka_struct! {
    pub struct DescribedGroup {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        group_id: String [0, _],
        group_state: String [0, _],
        group_epoch: i32 [0, _],
        assignment_epoch: i32 [0, _],
        assignor_name: String [0, _],
        members: Vec<Member> [0, _],
        authorized_operations: i32 [0, _] = i32::MIN,
    }
}

kafka_struct! {
    pub struct ConsumerGroupDescribeResponse {
        throttle_time_ms: i32 [0, _],
        groups: Vec<DescribedGroup> [0, _],
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

    fn response(v: i16, epoch: i32, partitions: Vec<i32>) -> ConsumerGroupDescribeResponse {
        let assignment = Assignment {
            topic_partitions: vec![TopicPartitions {
                topic_id: Uuid([2; 16]),
                topic_name: "t".into(),
                partitions,
            }],
        };
        ConsumerGroupDescribeResponse {
            throttle_time_ms: 0,
            groups: vec![DescribedGroup {
                error_code: 0,
                error_message: None,
                group_id: "g".into(),
                group_state: "Stable".into(),
                group_epoch: epoch,
                assignment_epoch: epoch,
                assignor_name: "uniform".into(),
                members: vec![Member {
                    member_id: "m".into(),
                    instance_id: None,
                    rack_id: Some("r".into()),
                    member_epoch: epoch,
                    client_id: "c".into(),
                    client_host: "/127.0.0.1".into(),
                    subscribed_topic_names: vec!["t".into()],
                    subscribed_topic_regex: None,
                    assignment: assignment.clone(),
                    target_assignment: assignment,
                    member_type: if v >= 1 { 1 } else { -1 },
                }],
                authorized_operations: i32::MIN,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=1,
            ids in proptest::collection::vec("[a-z]{0,10}", 0..4),
            ops: bool,
            epoch: i32,
            partitions in proptest::collection::vec(any::<i32>(), 0..6),
        ) {
            let request = ConsumerGroupDescribeRequest { group_ids: ids, include_authorized_operations: ops };
            assert_round_trip::<ConsumerGroupDescribe>(v, &request, &response(v, epoch, partitions));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<ConsumerGroupDescribe>(v, &response(v, 3, vec![0, 1]));
        }
    }

    #[test]
    fn request_bytes() {
        let request = ConsumerGroupDescribeRequest {
            group_ids: vec!["g".into()],
            include_authorized_operations: false,
        };
        let frame = encode_request::<ConsumerGroupDescribe>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, b'g', 0, 0]);
    }
}
