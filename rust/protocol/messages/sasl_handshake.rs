//! SaslHandshake (key 17): the client names the SASL mechanism it will use; the broker answers
//! with the mechanisms its listener enables. The first request after ApiVersions on a SASL
//! listener.
//!
//! Versions 0-1: v1 (KIP-152) announces that the SASL tokens follow in SaslAuthenticate
//! requests rather than as raw frames. Never flexible.

use super::Api;
use crate::kafka_struct;

pub struct SaslHandshake;

impl Api for SaslHandshake {
    const NAME: &'static str = "SaslHandshake";
    const KEY: i16 = 17;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = i16::MAX;
    type Request = SaslHandshakeRequest;
    type Response = SaslHandshakeResponse;
}

kafka_struct! {
    pub struct SaslHandshakeRequest {
        mechanism: String [0, _],
    }
}

kafka_struct! {
    pub struct SaslHandshakeResponse {
        error_code: i16 [0, _],
        mechanisms: Vec<String> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, mechanisms: &[&str]) -> SaslHandshakeResponse {
        SaslHandshakeResponse {
            error_code: code,
            mechanisms: mechanisms.iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=1,
            mechanism in "[A-Z0-9-]{0,20}",
            mechanisms in proptest::collection::vec("[A-Z0-9-]{1,20}", 0..5),
            code: i16,
        ) {
            let request = SaslHandshakeRequest { mechanism };
            let response = SaslHandshakeResponse { error_code: code, mechanisms };
            assert_round_trip::<SaslHandshake>(v, &request, &response);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<SaslHandshake>(v, &response(33, &["PLAIN", "SCRAM-SHA-256"]));
        }
    }

    #[test]
    fn bytes() {
        let request = SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        };
        let frame = encode_request::<SaslHandshake>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 5, b'P', b'L', b'A', b'I', b'N']);
        // v1 response: corr 3, UNSUPPORTED_SASL_MECHANISM (33), ["PLAIN"].
        let (corr, r) = decode_response::<SaslHandshake>(
            1,
            &[
                0, 0, 0, 3, 0, 33, 0, 0, 0, 1, 0, 5, b'P', b'L', b'A', b'I', b'N',
            ],
        )
        .unwrap();
        assert_eq!((corr, r), (3, response(33, &["PLAIN"])));
    }
}
