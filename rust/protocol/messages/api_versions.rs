//! ApiVersions (key 18): which APIs and versions a broker speaks. The first request on every
//! connection. Versions 0-3 are spoken by Kafka 2.4+ through 4.x; v4 (Kafka 3.9+/4.x) has v3's layout.
//!
//! A broker that does not know the requested version answers in the v0 layout with
//! UNSUPPORTED_VERSION (35) and its own range; see [`is_unsupported_version_reply`].

use super::Api;
use crate::kafka_struct;

pub struct ApiVersions;

impl Api for ApiVersions {
    const NAME: &'static str = "ApiVersions";
    const KEY: i16 = 18;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = ApiVersionsRequest;
    type Response = ApiVersionsResponse;

    /// ApiVersions responses always use header v0, so any client can read the error code.
    fn flexible_response_header(_version: i16) -> bool {
        false
    }
}

kafka_struct! {
    pub struct ApiVersionsRequest {
        client_software_name: String [3, _],
        client_software_version: String [3, _],
    }
}

kafka_struct! {
    pub struct ApiVersionsResponseKey {
        api_key: i16 [0, _],
        min_version: i16 [0, _],
        max_version: i16 [0, _],
    }
}

kafka_struct! {
    pub struct SupportedFeatureKey {
        name: String [3, _],
        min_version: i16 [3, _],
        max_version: i16 [3, _],
    }
}

kafka_struct! {
    pub struct FinalizedFeatureKey {
        name: String [3, _],
        max_version_level: i16 [3, _],
        min_version_level: i16 [3, _],
    }
}

kafka_struct! {
    pub struct ApiVersionsResponse {
        error_code: i16 [0, _],
        api_keys: Vec<ApiVersionsResponseKey> [0, _],
        throttle_time_ms: i32 [1, _],
    }
    tagged {
        supported_features: Vec<SupportedFeatureKey> = 0 [3, _],
        finalized_features_epoch: i64 = 1 [3, _],
        finalized_features: Vec<FinalizedFeatureKey> = 2 [3, _],
        zk_migration_ready: bool = 3 [3, _],
    }
}

/// True when a response frame (after the v0 header) carries UNSUPPORTED_VERSION, which the
/// broker always writes in the v0 layout whatever version was asked for.
pub fn is_unsupported_version_reply(frame: &[u8]) -> bool {
    frame.len() >= 6 && i16::from_be_bytes([frame[4], frame[5]]) == 35
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(
        version: i16,
        keys: Vec<(i16, i16, i16)>,
        epoch: Option<i64>,
    ) -> ApiVersionsResponse {
        ApiVersionsResponse {
            error_code: 0,
            api_keys: keys
                .into_iter()
                .map(
                    |(api_key, min_version, max_version)| ApiVersionsResponseKey {
                        api_key,
                        min_version,
                        max_version,
                    },
                )
                .collect(),
            throttle_time_ms: if version >= 1 { 5 } else { 0 },
            finalized_features_epoch: if version >= 3 { epoch } else { None },
            supported_features: if version >= 3 {
                Some(vec![SupportedFeatureKey {
                    name: "metadata.version".into(),
                    min_version: 1,
                    max_version: 27,
                }])
            } else {
                None
            },
            ..Default::default()
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            version in 0i16..=4,
            name in "[a-z-]{0,20}",
            keys in proptest::collection::vec((0i16..100, 0i16..5, 0i16..20), 0..30),
            epoch in proptest::option::of(any::<i64>()),
        ) {
            let request = ApiVersionsRequest {
                client_software_name: if version >= 3 { name.clone() } else { String::new() },
                client_software_version: if version >= 3 { "0.1.0".into() } else { String::new() },
            };
            assert_round_trip::<ApiVersions>(version, &request, &response(version, keys, epoch));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for version in 0..=4 {
            assert_truncations_fail::<ApiVersions>(
                version,
                &response(version, vec![(0, 3, 13), (1, 4, 17)], Some(9)),
            );
        }
    }

    #[test]
    fn v3_request_bytes() {
        let request = ApiVersionsRequest {
            client_software_name: "fk".into(),
            client_software_version: "1".into(),
        };
        let frame = encode_request::<ApiVersions>(3, 1, Some("c"), &request).unwrap();
        #[rustfmt::skip]
        let expected = [
            0, 0, 0, 18,        // size
            0, 18, 0, 3,        // key 18, version 3
            0, 0, 0, 1,         // correlation id
            0, 1, b'c',         // client id (int16 length, even in header v2)
            0,                  // header tagged fields
            3, b'f', b'k',      // compact string "fk"
            2, b'1',            // compact string "1"
            0,                  // body tagged fields
        ];
        assert_eq!(frame, expected);
    }

    #[test]
    fn unsupported_version_reply_is_detected_and_readable_as_v0() {
        // correlation id 1, error 35, one key (18, 0..2): the v0 layout.
        let frame = [0, 0, 0, 1, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 2];
        assert!(is_unsupported_version_reply(&frame));
        let (_, resp) = decode_response::<ApiVersions>(0, &frame).unwrap();
        assert_eq!(resp.error_code, 35);
        assert_eq!(resp.api_keys[0].max_version, 2);
        assert!(!is_unsupported_version_reply(&frame[..5]));
    }
}
