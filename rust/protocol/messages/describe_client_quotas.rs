//! DescribeClientQuotas (key 48): the quotas of users, client ids and IPs matching filters,
//! per entity (each entity a list of type and name pairs, a null name being the default).
//!
//! Versions 0-1: 1 flexible.

use super::common::QuotaEntityPart;
use super::Api;
use crate::kafka_struct;

pub struct DescribeClientQuotas;

impl Api for DescribeClientQuotas {
    const NAME: &'static str = "DescribeClientQuotas";
    const KEY: i16 = 48;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 1;
    type Request = DescribeClientQuotasRequest;
    type Response = DescribeClientQuotasResponse;
}

kafka_struct! {
    /// `match_type`: 0 the entity named `match_name` (the schema's `Match`), 1 the default
    /// entity, 2 any entity of the type.
    pub struct QuotaFilterComponent {
        entity_type: String [0, _],
        match_type: i8 [0, _],
        match_name: Option<String> [0, _],
    }
}

kafka_struct! {
    /// `strict`: only entities with no component beyond those filtered.
    pub struct DescribeClientQuotasRequest {
        components: Vec<QuotaFilterComponent> [0, _],
        strict: bool [0, _],
    }
}

kafka_struct! {
    pub struct QuotaValue {
        key: String [0, _],
        value: f64 [0, _],
    }
}

kafka_struct! {
    pub struct DescribedQuotaEntry {
        entity: Vec<QuotaEntityPart> [0, _],
        values: Vec<QuotaValue> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeClientQuotasResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        entries: Option<Vec<DescribedQuotaEntry>> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(name: Option<String>, value: f64) -> DescribeClientQuotasResponse {
        DescribeClientQuotasResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            entries: Some(vec![DescribedQuotaEntry {
                entity: vec![QuotaEntityPart {
                    entity_type: "user".into(),
                    entity_name: name,
                }],
                values: vec![QuotaValue {
                    key: "producer_byte_rate".into(),
                    value,
                }],
            }]),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=1,
            name in proptest::option::of("[a-z]{1,8}"),
            value in -1e12f64..1e12,
            match_type in 0i8..=2,
            strict: bool,
        ) {
            let request = DescribeClientQuotasRequest {
                components: vec![QuotaFilterComponent {
                    entity_type: "client-id".into(),
                    match_type,
                    match_name: name.clone(),
                }],
                strict,
            };
            assert_round_trip::<DescribeClientQuotas>(v, &request, &response(name, value));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<DescribeClientQuotas>(v, &response(None, 1024.0));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DescribeClientQuotasRequest {
            components: vec![QuotaFilterComponent {
                entity_type: "user".into(),
                match_type: 2,
                match_name: None,
            }],
            strict: true,
        };
        let frame = encode_request::<DescribeClientQuotas>(0, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 0, 0, 1, 0, 4, b'u', b's', b'e', b'r',  // components [ "user"
            2, 0xff, 0xff,                              //   any, match null
            1,                                          // strict
        ];
        assert_eq!(&frame[14..], v0);
    }
}
