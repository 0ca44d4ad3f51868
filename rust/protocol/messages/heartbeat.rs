//! Heartbeat (key 12): a classic group member's keep-alive; its error code announces a
//! rebalance.
//!
//! Versions 0-4: 1 throttle time; 3 `group_instance_id`; 4 flexible.

use super::Api;
use crate::kafka_struct;

pub struct Heartbeat;

impl Api for Heartbeat {
    const NAME: &'static str = "Heartbeat";
    const KEY: i16 = 12;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 4;
    type Request = HeartbeatRequest;
    type Response = HeartbeatResponse;
}

kafka_struct! {
    pub struct HeartbeatRequest {
        group_id: String [0, _],
        generation_id: i32 [0, _],
        member_id: String [0, _],
        group_instance_id: Option<String> [3, _],
    }
}

kafka_struct! {
    pub struct HeartbeatResponse {
        throttle_time_ms: i32 [1, _],
        error_code: i16 [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, code: i16) -> HeartbeatResponse {
        HeartbeatResponse {
            throttle_time_ms: if v >= 1 { 9 } else { 0 },
            error_code: code,
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=4,
            generation: i32,
            member in "[a-z0-9-]{0,30}",
            instance in proptest::option::of("[a-z]{1,10}"),
            code: i16,
        ) {
            let request = HeartbeatRequest {
                group_id: "g".into(),
                generation_id: generation,
                member_id: member,
                group_instance_id: if v >= 3 { instance } else { None },
            };
            assert_round_trip::<Heartbeat>(v, &request, &response(v, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=4 {
            assert_truncations_fail::<Heartbeat>(v, &response(v, 27));
        }
    }

    #[test]
    fn bytes() {
        let request = HeartbeatRequest {
            group_id: "g".into(),
            generation_id: 1,
            member_id: "m".into(),
            group_instance_id: None,
        };
        let frame = encode_request::<Heartbeat>(3, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 1, b'g', 0, 0, 0, 1, 0, 1, b'm', 0xff, 0xff]
        );
        let frame = encode_request::<Heartbeat>(4, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, b'g', 0, 0, 0, 1, 2, b'm', 0, 0]);
        // v4 response: corr 5, header tags, throttle 0, REBALANCE_IN_PROGRESS (27), tags.
        let (corr, r) =
            decode_response::<Heartbeat>(4, &[0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 27, 0]).unwrap();
        assert_eq!((corr, r.error_code), (5, 27));
    }
}
