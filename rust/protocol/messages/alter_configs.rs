//! AlterConfigs (key 33): replace the dynamic configuration of topics (resource type 2) and
//! brokers (4). Keys not named are reset to their defaults (IncrementalAlterConfigs, key 44,
//! is the per-key variant).
//!
//! Versions 0-2: 1 same as 0; 2 flexible.

use super::Api;
use crate::kafka_struct;

pub struct AlterConfigs;

impl Api for AlterConfigs {
    const NAME: &'static str = "AlterConfigs";
    const KEY: i16 = 33;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = AlterConfigsRequest;
    type Response = AlterConfigsResponse;
}

kafka_struct! {
    pub struct AlterableConfig {
        name: String [0, _],
        value: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct AlterConfigsResource {
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        configs: Vec<AlterableConfig> [0, _],
    }
}

kafka_struct! {
    pub struct AlterConfigsRequest {
        resources: Vec<AlterConfigsResource> [0, _],
        validate_only: bool [0, _],
    }
}

kafka_struct! {
    pub struct AlterConfigsResourceResponse {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        resource_type: i8 [0, _],
        resource_name: String [0, _],
    }
}

kafka_struct! {
    pub struct AlterConfigsResponse {
        throttle_time_ms: i32 [0, _],
        responses: Vec<AlterConfigsResourceResponse> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(message: Option<String>) -> AlterConfigsResponse {
        AlterConfigsResponse {
            throttle_time_ms: 0,
            responses: vec![AlterConfigsResourceResponse {
                error_code: if message.is_some() { 40 } else { 0 },
                error_message: message,
                resource_type: 2,
                resource_name: "t".into(),
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=2,
            configs in proptest::collection::vec(
                ("[a-z.]{1,12}", proptest::option::of("[0-9]{0,10}")), 0..3),
            message in proptest::option::of("[a-z ]{0,20}"),
            validate_only: bool,
        ) {
            let request = AlterConfigsRequest {
                resources: vec![AlterConfigsResource {
                    resource_type: 2,
                    resource_name: "t".into(),
                    configs: configs
                        .into_iter()
                        .map(|(name, value)| AlterableConfig { name, value })
                        .collect(),
                }],
                validate_only,
            };
            assert_round_trip::<AlterConfigs>(v, &request, &response(message));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=2 {
            assert_truncations_fail::<AlterConfigs>(v, &response(Some("bad".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = AlterConfigsRequest {
            resources: vec![AlterConfigsResource {
                resource_type: 2,
                resource_name: "t".into(),
                configs: vec![AlterableConfig {
                    name: "a".into(),
                    value: None,
                }],
            }],
            validate_only: true,
        };
        // v0: [ type 2, "t", [ "a", null ] ], validate_only.
        let frame = encode_request::<AlterConfigs>(0, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 0, 0, 1, 2, 0, 1, b't', 0, 0, 0, 1, 0, 1, b'a', 0xff, 0xff, 1]
        );
        // v2: header tags, compact arrays and strings (null string: 0), a tag section each.
        let frame = encode_request::<AlterConfigs>(2, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, 2, b't', 2, 2, b'a', 0, 0, 0, 1, 0]);
    }
}
