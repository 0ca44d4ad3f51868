//! ShareGroupHeartbeat (key 76): a share group's member (KIP-932) joins, heartbeats, learns its
//! assignment and leaves with this one API, as a KIP-848 consumer does with
//! ConsumerGroupHeartbeat; the broker computes the assignment.
//!
//! Version 1, flexible (Kafka 4.2; the early-access version 0 of 4.0 is gone). Member epochs:
//! 0 joins, -1 leaves. A share member has no instance id, rebalance timeout, assignor or owned
//! partitions; `subscribed_topic_names` is null when it did not change since the last heartbeat,
//! and the response's `assignment` null when the assignment did not.

use super::common::GroupAssignment;
use super::Api;
use crate::kafka_struct;

pub struct ShareGroupHeartbeat;

impl Api for ShareGroupHeartbeat {
    const NAME: &'static str = "ShareGroupHeartbeat";
    const KEY: i16 = 76;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ShareGroupHeartbeatRequest;
    type Response = ShareGroupHeartbeatResponse;
}

kafka_struct! {
    pub struct ShareGroupHeartbeatRequest {
        group_id: String [0, _],
        member_id: String [0, _],
        member_epoch: i32 [0, _],
        rack_id: Option<String> [0, _],
        subscribed_topic_names: Option<Vec<String>> [0, _],
    }
}

kafka_struct! {
    pub struct ShareGroupHeartbeatResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        member_id: Option<String> [0, _],
        member_epoch: i32 [0, _],
        heartbeat_interval_ms: i32 [0, _],
        assignment: Option<GroupAssignment> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::GroupTopicPartitions;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use crate::protocol::codec::Uuid;
    use proptest::prelude::*;

    fn response(epoch: i32, assigned: bool) -> ShareGroupHeartbeatResponse {
        ShareGroupHeartbeatResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            member_id: Some("m".into()),
            member_epoch: epoch,
            heartbeat_interval_ms: 5000,
            assignment: assigned.then(|| GroupAssignment {
                topic_partitions: vec![GroupTopicPartitions {
                    topic_id: Uuid([3; 16]),
                    partitions: vec![0, 2],
                }],
            }),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            epoch: i32,
            names in proptest::option::of(proptest::collection::vec("[a-z]{1,8}", 0..4)),
            rack in proptest::option::of("[a-z]{1,4}"),
            assigned: bool,
        ) {
            let request = ShareGroupHeartbeatRequest {
                group_id: "g".into(),
                member_id: "m".into(),
                member_epoch: epoch,
                rack_id: rack,
                subscribed_topic_names: names,
            };
            assert_round_trip::<ShareGroupHeartbeat>(1, &request, &response(epoch, assigned));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for assigned in [false, true] {
            assert_truncations_fail::<ShareGroupHeartbeat>(1, &response(7, assigned));
        }
    }

    #[test]
    fn bytes() {
        let request = ShareGroupHeartbeatRequest {
            group_id: "g".into(),
            member_id: "m".into(),
            member_epoch: 0,
            rack_id: None,
            subscribed_topic_names: Some(vec!["t".into()]),
        };
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0,                          // header tags
            2, b'g', 2, b'm',           // group_id "g", member_id "m"
            0, 0, 0, 0,                 // member_epoch 0 (join)
            0,                          // rack null
            2, 2, b't',                 // subscribed ["t"]
            0,                          // tags
        ];
        let frame = encode_request::<ShareGroupHeartbeat>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v1);
        #[rustfmt::skip]
        let response: &[u8] = &[
            0, 0, 0, 1, 0,              // correlation id, header tags
            0, 0, 0, 0, 0, 0,           // throttle, error
            0, 2, b'm',                 // error_message null, member_id "m"
            0, 0, 0, 1, 0, 0, 0x13, 0x88, // epoch 1, interval 5000
            0xff,                       // assignment null (unchanged)
            0,                          // tags
        ];
        let (_, r) = decode_response::<ShareGroupHeartbeat>(1, response).unwrap();
        assert_eq!((r.member_epoch, r.assignment), (1, None));
    }
}
