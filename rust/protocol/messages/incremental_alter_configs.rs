//! IncrementalAlterConfigs (key 44): change single configs of topics (resource type 2),
//! brokers (4) and broker loggers (8) by operation: 0 set, 1 delete, 2 append, 3 subtract
//! (the last two for list-valued configs). A broker's resources go to that broker.
//!
//! Versions 0-1: 1 flexible.

use super::Api;
use crate::kafka_struct;

pub struct IncrementalAlterConfigs;

impl Api for IncrementalAlterConfigs {
    const NAME: &'static str = "IncrementalAlterConfigs";
    const KEY: i16 = 44;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 1;
    type Request = IncrementalAlterConfigsRequest;
    type Response = IncrementalAlterConfigsResponse;
}

kafka_struct! {
    pub struct IncrementalAlterableConfig {
        name: String [0, _],
        config_operation: i8 [0, _],
        value: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct IncrementalAlterConfigsResource {
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        configs: Vec<IncrementalAlterableConfig> [0, _],
    }
}

kafka_struct! {
    pub struct IncrementalAlterConfigsRequest {
        resources: Vec<IncrementalAlterConfigsResource> [0, _],
        validate_only: bool [0, _],
    }
}

kafka_struct! {
    pub struct IncrementalAlterConfigsResult {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        resource_type: i8 [0, _],
        resource_name: String [0, _],
    }
}

kafka_struct! {
    pub struct IncrementalAlterConfigsResponse {
        throttle_time_ms: i32 [0, _],
        responses: Vec<IncrementalAlterConfigsResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, message: Option<String>) -> IncrementalAlterConfigsResponse {
        IncrementalAlterConfigsResponse {
            throttle_time_ms: 0,
            responses: vec![IncrementalAlterConfigsResult {
                error_code: code,
                error_message: message,
                resource_type: 2,
                resource_name: "t".into(),
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=1,
            op in 0i8..=3,
            value in proptest::option::of("[a-z0-9,]{0,12}"),
            validate: bool,
            code: i16,
            message in proptest::option::of("[a-z ]{0,12}"),
        ) {
            let request = IncrementalAlterConfigsRequest {
                resources: vec![IncrementalAlterConfigsResource {
                    resource_type: 2,
                    resource_name: "t".into(),
                    configs: vec![IncrementalAlterableConfig {
                        name: "retention.ms".into(),
                        config_operation: op,
                        value,
                    }],
                }],
                validate_only: validate,
            };
            assert_round_trip::<IncrementalAlterConfigs>(v, &request, &response(code, message));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<IncrementalAlterConfigs>(v, &response(42, Some("no".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = IncrementalAlterConfigsRequest {
            resources: vec![IncrementalAlterConfigsResource {
                resource_type: 2,
                resource_name: "t".into(),
                configs: vec![IncrementalAlterableConfig {
                    name: "a".into(),
                    config_operation: 1,
                    value: None,
                }],
            }],
            validate_only: false,
        };
        let frame = encode_request::<IncrementalAlterConfigs>(0, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 0, 0, 1, 2, 0, 1, b't',  // resources [ topic "t"
            0, 0, 0, 1, 0, 1, b'a', 1,  //   configs [ "a" delete
            0xff, 0xff,                 //   value null
            0,                          // validate_only false
        ];
        assert_eq!(&frame[14..], v0);
    }
}
