//! AlterClientQuotas (key 49): set or remove quota values of users, client ids and IPs.
//! KRaft brokers forward it to the controller.
//!
//! Versions 0-1: 1 flexible.

use super::common::QuotaEntityPart;
use super::Api;
use crate::kafka_struct;

pub struct AlterClientQuotas;

impl Api for AlterClientQuotas {
    const NAME: &'static str = "AlterClientQuotas";
    const KEY: i16 = 49;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 1;
    type Request = AlterClientQuotasRequest;
    type Response = AlterClientQuotasResponse;
}

kafka_struct! {
    /// `remove`: drop the key (its value is ignored).
    pub struct QuotaOp {
        key: String [0, _],
        value: f64 [0, _],
        remove: bool [0, _],
    }
}

kafka_struct! {
    pub struct AlterQuotaEntry {
        entity: Vec<QuotaEntityPart> [0, _],
        ops: Vec<QuotaOp> [0, _],
    }
}

kafka_struct! {
    pub struct AlterClientQuotasRequest {
        entries: Vec<AlterQuotaEntry> [0, _],
        validate_only: bool [0, _],
    }
}

kafka_struct! {
    pub struct AlteredQuotaEntry {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        entity: Vec<QuotaEntityPart> [0, _],
    }
}

kafka_struct! {
    pub struct AlterClientQuotasResponse {
        throttle_time_ms: i32 [0, _],
        entries: Vec<AlteredQuotaEntry> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn entity(name: Option<String>) -> Vec<QuotaEntityPart> {
        vec![QuotaEntityPart {
            entity_type: "user".into(),
            entity_name: name,
        }]
    }

    fn response(code: i16, name: Option<String>) -> AlterClientQuotasResponse {
        AlterClientQuotasResponse {
            throttle_time_ms: 0,
            entries: vec![AlteredQuotaEntry {
                error_code: code,
                error_message: None,
                entity: entity(name),
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=1,
            name in proptest::option::of("[a-z]{1,8}"),
            value in 0f64..1e12,
            remove: bool,
            code: i16,
        ) {
            let request = AlterClientQuotasRequest {
                entries: vec![AlterQuotaEntry {
                    entity: entity(name.clone()),
                    ops: vec![QuotaOp { key: "request_percentage".into(), value, remove }],
                }],
                validate_only: false,
            };
            assert_round_trip::<AlterClientQuotas>(v, &request, &response(code, name));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<AlterClientQuotas>(v, &response(42, Some("u".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = AlterClientQuotasRequest {
            entries: vec![AlterQuotaEntry {
                entity: entity(None),
                ops: vec![QuotaOp {
                    key: "k".into(),
                    value: 1.5,
                    remove: false,
                }],
            }],
            validate_only: true,
        };
        let frame = encode_request::<AlterClientQuotas>(1, 0, None, &request).unwrap();
        let mut v1 = vec![0, 2, 2, 5, b'u', b's', b'e', b'r', 0, 0, 2, 2, b'k'];
        v1.extend_from_slice(&1.5f64.to_be_bytes());
        v1.extend_from_slice(&[0, 0, 0, 1, 0]); // remove, op tags, entry tags, validate, tags
        assert_eq!(&frame[14..], &v1[..]);
    }
}
