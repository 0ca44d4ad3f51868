//! DescribeConfigs (key 32): configuration of topics (resource type 2), brokers (4), broker
//! loggers (8), client metrics (16) and groups (32).
//!
//! Versions 1-4: v1 is Kafka 4.x's floor (v0 was removed) and adds synonyms and the config
//! source; 2 same as 1; 3 config type and documentation; 4 flexible.

use super::Api;
use crate::kafka_struct;

pub struct DescribeConfigs;

impl Api for DescribeConfigs {
    const NAME: &'static str = "DescribeConfigs";
    const KEY: i16 = 32;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 4;
    type Request = DescribeConfigsRequest;
    type Response = DescribeConfigsResponse;
}

kafka_struct! {
    /// `configuration_keys: None` asks for every key.
    pub struct DescribeConfigsResource {
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        configuration_keys: Option<Vec<String>> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeConfigsRequest {
        resources: Vec<DescribeConfigsResource> [0, _],
        include_synonyms: bool [1, _],
        include_documentation: bool [3, _],
    }
}

kafka_struct! {
    pub struct DescribeConfigsSynonym {
        name: String [1, _],
        value: Option<String> [1, _],
        source: i8 [1, _],
    }
}

kafka_struct! {
    pub struct DescribeConfigsResourceResult {
        name: String [0, _],
        value: Option<String> [0, _],
        read_only: bool [0, _],
        config_source: i8 [1, _] = -1,
        is_sensitive: bool [0, _],
        synonyms: Vec<DescribeConfigsSynonym> [1, _],
        config_type: i8 [3, _],
        documentation: Option<String> [3, _],
    }
}

kafka_struct! {
    pub struct DescribeConfigsResult {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        configs: Vec<DescribeConfigsResourceResult> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeConfigsResponse {
        throttle_time_ms: i32 [0, _],
        results: Vec<DescribeConfigsResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, value: Option<String>, doc: Option<String>) -> DescribeConfigsResponse {
        DescribeConfigsResponse {
            throttle_time_ms: 0,
            results: vec![DescribeConfigsResult {
                error_code: 0,
                error_message: None,
                resource_type: 2,
                resource_name: "t".into(),
                configs: vec![DescribeConfigsResourceResult {
                    name: "retention.ms".into(),
                    value: value.clone(),
                    read_only: false,
                    config_source: 1,
                    is_sensitive: false,
                    synonyms: vec![DescribeConfigsSynonym {
                        name: "retention.ms".into(),
                        value,
                        source: 1,
                    }],
                    config_type: if v >= 3 { 5 } else { 0 },
                    documentation: if v >= 3 { doc } else { None },
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=4,
            keys in proptest::option::of(proptest::collection::vec("[a-z.]{1,12}", 0..3)),
            value in proptest::option::of("[0-9]{0,10}"),
            doc in proptest::option::of("[a-z ]{0,20}"),
            synonyms: bool,
        ) {
            let request = DescribeConfigsRequest {
                resources: vec![DescribeConfigsResource {
                    resource_type: 2,
                    resource_name: "t".into(),
                    configuration_keys: keys,
                }],
                include_synonyms: synonyms,
                include_documentation: v >= 3,
            };
            assert_round_trip::<DescribeConfigs>(v, &request, &response(v, value, doc));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=4 {
            assert_truncations_fail::<DescribeConfigs>(v, &response(v, Some("1".into()), None));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DescribeConfigsRequest {
            resources: vec![DescribeConfigsResource {
                resource_type: 2,
                resource_name: "t".into(),
                configuration_keys: None,
            }],
            include_synonyms: false,
            include_documentation: false,
        };
        let frame = encode_request::<DescribeConfigs>(1, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 0, 0, 1, 2, 0, 1, b't', 0xff, 0xff, 0xff, 0xff, 0]
        );
        // v4: header tags, [ type 2, "t", keys null, tags ], synonyms, documentation, tags.
        let frame = encode_request::<DescribeConfigs>(4, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, 2, b't', 0, 0, 0, 0, 0]);
    }
}
