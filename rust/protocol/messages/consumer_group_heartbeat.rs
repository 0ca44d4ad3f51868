//! ConsumerGroupHeartbeat (key 68): the KIP-848 consumer group protocol, where the broker
//! computes assignments and every member only heartbeats (join, leave and assignment in one
//! API).
//!
//! Versions 0-1, all flexible: v1 adds a server-side regex subscription
//! (`subscribed_topic_regex`). Member epochs: 0 joins, -1 leaves, -2 leaves a static member
//! temporarily. Fields that did not change since the last heartbeat are sent as null.

use super::common::{GroupAssignment, GroupTopicPartitions};
use super::Api;
use crate::kafka_struct;

pub struct ConsumerGroupHeartbeat;

impl Api for ConsumerGroupHeartbeat {
    const NAME: &'static str = "ConsumerGroupHeartbeat";
    const KEY: i16 = 68;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ConsumerGroupHeartbeatRequest;
    type Response = ConsumerGroupHeartbeatResponse;
}

kafka_struct! {
    pub struct ConsumerGroupHeartbeatRequest {
        group_id: String [0, _],
        member_id: String [0, _],
        member_epoch: i32 [0, _],
        instance_id: Option<String> [0, _],
        rack_id: Option<String> [0, _],
        rebalance_timeout_ms: i32 [0, _] = -1,
        subscribed_topic_names: Option<Vec<String>> [0, _],
        subscribed_topic_regex: Option<String> [1, _],
        server_assignor: Option<String> [0, _],
        topic_partitions: Option<Vec<GroupTopicPartitions>> [0, _],
    }
}

kafka_struct! {
    /// `assignment` is null when it did not change since the last heartbeat.
    pub struct ConsumerGroupHeartbeatResponse {
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
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use crate::protocol::codec::{Uuid, Version, Wire};
    use proptest::prelude::*;

    fn response(epoch: i32, assigned: bool) -> ConsumerGroupHeartbeatResponse {
        ConsumerGroupHeartbeatResponse {
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
            v in 0i16..=1,
            epoch: i32,
            names in proptest::option::of(proptest::collection::vec("[a-z]{1,8}", 0..4)),
            regex in proptest::option::of("[a-z.*]{1,8}"),
            owned in proptest::option::of(proptest::collection::vec(0i32..100, 0..4)),
            assigned: bool,
        ) {
            let request = ConsumerGroupHeartbeatRequest {
                group_id: "g".into(),
                member_id: "m".into(),
                member_epoch: epoch,
                instance_id: None,
                rack_id: Some("r".into()),
                rebalance_timeout_ms: 300_000,
                subscribed_topic_names: names,
                subscribed_topic_regex: if v >= 1 { regex } else { None },
                server_assignor: Some("uniform".into()),
                topic_partitions: owned.map(|partitions| {
                    vec![GroupTopicPartitions { topic_id: Uuid([1; 16]), partitions }]
                }),
            };
            assert_round_trip::<ConsumerGroupHeartbeat>(v, &request, &response(epoch, assigned));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            for assigned in [false, true] {
                assert_truncations_fail::<ConsumerGroupHeartbeat>(v, &response(7, assigned));
            }
        }
    }

    #[test]
    fn bytes() {
        let request = ConsumerGroupHeartbeatRequest {
            group_id: "g".into(),
            member_epoch: 0,
            subscribed_topic_names: Some(vec!["t".into()]),
            ..Default::default()
        };
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0,                          // header tags
            2, b'g', 1,                 // group_id "g", member_id ""
            0, 0, 0, 0,                 // member_epoch 0 (join)
            0, 0,                       // instance, rack null
            0xff, 0xff, 0xff, 0xff,     // rebalance timeout -1
            2, 2, b't',                 // subscribed ["t"]
            0, 0,                       // assignor null, topic_partitions null
            0,                          // tags
        ];
        let frame = encode_request::<ConsumerGroupHeartbeat>(0, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v0);

        #[rustfmt::skip]
        let response: &[u8] = &[
            0, 0, 0, 1, 0,              // correlation id, header tags
            0, 0, 0, 0, 0, 0,           // throttle, error
            0, 2, b'm',                 // error_message null, member_id "m"
            0, 0, 0, 1, 0, 0, 0x13, 0x88, // epoch 1, interval 5000
            1,                          // assignment present
            2, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
            2, 0, 0, 0, 0, 0,           //   [ {id, [0]}, tags ]
            0,                          //   assignment tags
            0,                          // tags
        ];
        let (_, r) = decode_response::<ConsumerGroupHeartbeat>(0, response).unwrap();
        let a = r.assignment.unwrap();
        assert_eq!(a.topic_partitions[0].topic_id, Uuid([5; 16]));
        assert_eq!(a.topic_partitions[0].partitions, vec![0]);
        // A null assignment is the marker -1 alone.
        let mut out = Vec::new();
        None::<GroupAssignment>.write(&mut out, Version::new(0, true));
        assert_eq!(out, vec![0xff]);
    }
}
