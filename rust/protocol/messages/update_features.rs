//! UpdateFeatures (key 57): upgrade or downgrade the cluster's finalized feature levels
//! (`metadata.version`, `transaction.version`, `group.version`, ...). KRaft brokers forward it
//! to the controller.
//!
//! Versions 1-2: flexible; 1 (Kafka 3.3) is the floor, whose upgrade type (1 upgrade, 2 safe
//! downgrade, 3 unsafe downgrade) replaced v0's "allow downgrade" flag, and adds validate-only;
//! 2 answers with the top-level error only (no per-feature results).

use super::Api;
use crate::kafka_struct;

pub struct UpdateFeatures;

impl Api for UpdateFeatures {
    const NAME: &'static str = "UpdateFeatures";
    const KEY: i16 = 57;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = UpdateFeaturesRequest;
    type Response = UpdateFeaturesResponse;
}

kafka_struct! {
    /// A level below 1 deletes the feature's finalized level (a downgrade).
    pub struct FeatureUpdateKey {
        feature: String [0, _],
        max_version_level: i16 [0, _],
        upgrade_type: i8 [1, _] = 1,
    }
}

kafka_struct! {
    pub struct UpdateFeaturesRequest {
        timeout_ms: i32 [0, _] = 60000,
        feature_updates: Vec<FeatureUpdateKey> [0, _],
        validate_only: bool [1, _],
    }
}

kafka_struct! {
    pub struct UpdatableFeatureResult {
        feature: String [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct UpdateFeaturesResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        results: Vec<UpdatableFeatureResult> [0, 1],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, code: i16, message: Option<String>) -> UpdateFeaturesResponse {
        UpdateFeaturesResponse {
            throttle_time_ms: 0,
            error_code: code,
            error_message: message.clone(),
            results: if v <= 1 {
                vec![UpdatableFeatureResult {
                    feature: "transaction.version".into(),
                    error_code: code,
                    error_message: message,
                }]
            } else {
                vec![]
            },
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=2,
            level: i16,
            validate_only: bool,
            upgrade_type in 1i8..=3,
            code: i16,
            message in proptest::option::of("[a-z ]{0,12}"),
        ) {
            let request = UpdateFeaturesRequest {
                timeout_ms: 1000,
                feature_updates: vec![FeatureUpdateKey {
                    feature: "group.version".into(),
                    max_version_level: level,
                    upgrade_type,
                }],
                validate_only,
            };
            assert_round_trip::<UpdateFeatures>(v, &request, &response(v, code, message));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=2 {
            assert_truncations_fail::<UpdateFeatures>(v, &response(v, 96, Some("no".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = UpdateFeaturesRequest {
            timeout_ms: 1000,
            feature_updates: vec![FeatureUpdateKey {
                feature: "f".into(),
                max_version_level: 2,
                upgrade_type: 3,
            }],
            validate_only: true,
        };
        let frame = encode_request::<UpdateFeatures>(1, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0, 0, 0, 0x03, 0xe8,        // header tags, timeout 1000
            2, 2, b'f', 0, 2, 3, 0,     // updates [ "f" level 2, unsafe downgrade, tags
            1, 0,                       // validate only, tags
        ];
        assert_eq!(&frame[14..], v1);
    }
}
