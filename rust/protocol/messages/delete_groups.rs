//! DeleteGroups (key 42): delete groups that have no members, their committed offsets with them.
//! Sent to each group's coordinator; the answer has one error code per group.
//!
//! Versions 0-2: 1 is 0 answered before throttling; 2 flexible. Kafka 3.9 and 4.x speak up to 2.

use super::Api;
use crate::kafka_struct;

pub struct DeleteGroups;

impl Api for DeleteGroups {
    const NAME: &'static str = "DeleteGroups";
    const KEY: i16 = 42;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = DeleteGroupsRequest;
    type Response = DeleteGroupsResponse;
}

kafka_struct! {
    pub struct DeleteGroupsRequest {
        groups_names: Vec<String> [0, _],
    }
}

kafka_struct! {
    pub struct DeletableGroupResult {
        group_id: String [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct DeleteGroupsResponse {
        throttle_time_ms: i32 [0, _],
        results: Vec<DeletableGroupResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(groups: &[(String, i16)]) -> DeleteGroupsResponse {
        DeleteGroupsResponse {
            throttle_time_ms: 1,
            results: groups
                .iter()
                .map(|(id, code)| DeletableGroupResult {
                    group_id: id.clone(),
                    error_code: *code,
                })
                .collect(),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=2,
            groups in proptest::collection::vec(("[a-z.-]{0,20}", any::<i16>()), 0..4),
        ) {
            let request = DeleteGroupsRequest {
                groups_names: groups.iter().map(|(id, _)| id.clone()).collect(),
            };
            assert_round_trip::<DeleteGroups>(v, &request, &response(&groups));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        let groups = [("g".to_string(), 0), ("busy".to_string(), 68)];
        for v in 0..=2 {
            assert_truncations_fail::<DeleteGroups>(v, &response(&groups));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DeleteGroupsRequest {
            groups_names: vec!["g".into()],
        };
        // v0 and v1: int32 count, int16-length string.
        for v in 0..=1 {
            let frame = encode_request::<DeleteGroups>(v, 0, None, &request).unwrap();
            assert_eq!(&frame[14..], &[0, 0, 0, 1, 0, 1, b'g']);
        }
        // v2: header tags, compact array of one compact string, tags.
        let frame = encode_request::<DeleteGroups>(2, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, b'g', 0]);
    }

    #[test]
    fn response_bytes() {
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0, 0, 0, 7,           // correlation id 7
            0, 0, 0, 5,           // throttle 5
            0, 0, 0, 2,           // results [
            0, 1, b'a', 0, 0,     //   "a": deleted
            0, 1, b'b', 0, 68,    //   "b": NON_EMPTY_GROUP ]
        ];
        let (corr, r) = decode_response::<DeleteGroups>(1, v1).unwrap();
        assert_eq!(corr, 7);
        assert_eq!(r, response_of(5, &[("a", 0), ("b", 68)]));

        #[rustfmt::skip]
        let v2: &[u8] = &[
            0, 0, 0, 8, 0,        // correlation id 8, header tags
            0, 0, 0, 0,           // throttle 0
            2, 2, b'c', 0, 69, 0, // results [ "c": GROUP_ID_NOT_FOUND, tags ]
            0,                    // response tags
        ];
        let (corr, r) = decode_response::<DeleteGroups>(2, v2).unwrap();
        assert_eq!(corr, 8);
        assert_eq!(r, response_of(0, &[("c", 69)]));
    }

    fn response_of(throttle_time_ms: i32, groups: &[(&str, i16)]) -> DeleteGroupsResponse {
        DeleteGroupsResponse {
            throttle_time_ms,
            ..response(
                &groups
                    .iter()
                    .map(|(id, code)| (id.to_string(), *code))
                    .collect::<Vec<_>>(),
            )
        }
    }
}
