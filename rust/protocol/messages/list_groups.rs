//! ListGroups (key 16): the groups a broker coordinates.
//!
//! Versions 0-5: 1 throttle time; 3 flexible; 4 filter by and report the group state; 5 filter
//! by and report the group type ("classic", "consumer", "share"). Kafka 3.x speaks up to 4.

use super::Api;
use crate::kafka_struct;

pub struct ListGroups;

impl Api for ListGroups {
    const NAME: &'static str = "ListGroups";
    const KEY: i16 = 16;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = ListGroupsRequest;
    type Response = ListGroupsResponse;
}

kafka_struct! {
    /// Empty filters match every group.
    pub struct ListGroupsRequest {
        states_filter: Vec<String> [4, _],
        types_filter: Vec<String> [5, _],
    }
}

kafka_struct! {
    pub struct ListedGroup {
        group_id: String [0, _],
        protocol_type: String [0, _],
        group_state: String [4, _],
        group_type: String [5, _],
    }
}

kafka_struct! {
    pub struct ListGroupsResponse {
        throttle_time_ms: i32 [1, _],
        error_code: i16 [0, _],
        groups: Vec<ListedGroup> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, id: &str, code: i16) -> ListGroupsResponse {
        ListGroupsResponse {
            throttle_time_ms: if v >= 1 { 1 } else { 0 },
            error_code: code,
            groups: vec![ListedGroup {
                group_id: id.into(),
                protocol_type: "consumer".into(),
                group_state: if v >= 4 {
                    "Empty".into()
                } else {
                    String::new()
                },
                group_type: if v >= 5 {
                    "classic".into()
                } else {
                    String::new()
                },
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 0i16..=5, id in "[a-z-]{0,20}", code: i16, states in proptest::collection::vec("[A-Za-z]{1,10}", 0..3)) {
            let request = ListGroupsRequest {
                states_filter: if v >= 4 { states } else { vec![] },
                types_filter: if v >= 5 { vec!["consumer".into()] } else { vec![] },
            };
            assert_round_trip::<ListGroups>(v, &request, &response(v, &id, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=5 {
            assert_truncations_fail::<ListGroups>(v, &response(v, "g", 0));
        }
    }

    #[test]
    fn bytes() {
        let request = ListGroupsRequest {
            states_filter: vec!["Empty".into()],
            types_filter: vec![],
        };
        // v0 has an empty body; v4: header tags, states ["Empty"], tags.
        let frame = encode_request::<ListGroups>(0, 0, None, &request).unwrap();
        assert_eq!(frame.len(), 14);
        let frame = encode_request::<ListGroups>(4, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 6, b'E', b'm', b'p', b't', b'y', 0]);

        #[rustfmt::skip]
        let v5: &[u8] = &[
            0, 0, 0, 9, 0,        // correlation id 9, header tags
            0, 0, 0, 0, 0, 0,     // throttle 0, error 0
            2, 2, b'g',           // groups [ "g"
            9, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r',
            6, b'E', b'm', b'p', b't', b'y',
            8, b'c', b'l', b'a', b's', b's', b'i', b'c',
            0, 0,                 // group tags, response tags
        ];
        let (corr, r) = decode_response::<ListGroups>(5, v5).unwrap();
        assert_eq!(corr, 9);
        assert_eq!(
            r.groups,
            vec![ListedGroup {
                group_id: "g".into(),
                protocol_type: "consumer".into(),
                group_state: "Empty".into(),
                group_type: "classic".into(),
            }]
        );
    }
}
