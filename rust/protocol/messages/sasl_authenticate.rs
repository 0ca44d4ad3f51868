//! SaslAuthenticate (key 36): one round of a SASL exchange, the mechanism's token each way,
//! after a v1 SaslHandshake (KIP-152).
//!
//! Versions 0-2: 1 `session_lifetime_ms` in the response (KIP-368: the client must
//! re-authenticate before it ends); 2 flexible.

use serde_bytes::ByteBuf;

use super::Api;
use crate::kafka_struct;

pub struct SaslAuthenticate;

impl Api for SaslAuthenticate {
    const NAME: &'static str = "SaslAuthenticate";
    const KEY: i16 = 36;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = SaslAuthenticateRequest;
    type Response = SaslAuthenticateResponse;
}

kafka_struct! {
    pub struct SaslAuthenticateRequest {
        auth_bytes: ByteBuf [0, _],
    }
}

kafka_struct! {
    pub struct SaslAuthenticateResponse {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        auth_bytes: ByteBuf [0, _],
        session_lifetime_ms: i64 [1, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(
        v: i16,
        code: i16,
        message: Option<&str>,
        token: &[u8],
    ) -> SaslAuthenticateResponse {
        SaslAuthenticateResponse {
            error_code: code,
            error_message: message.map(str::to_owned),
            auth_bytes: ByteBuf::from(token.to_vec()),
            session_lifetime_ms: if v >= 1 { 3_600_000 } else { 0 },
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=2,
            token in proptest::collection::vec(any::<u8>(), 0..300),
            reply in proptest::collection::vec(any::<u8>(), 0..300),
            message in proptest::option::of("[ -~]{0,40}"),
            code: i16,
        ) {
            let request = SaslAuthenticateRequest { auth_bytes: ByteBuf::from(token) };
            let response = response(v, code, message.as_deref(), &reply);
            assert_round_trip::<SaslAuthenticate>(v, &request, &response);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=2 {
            assert_truncations_fail::<SaslAuthenticate>(v, &response(v, 0, None, b"v=abc"));
            assert_truncations_fail::<SaslAuthenticate>(
                v,
                &response(v, 58, Some("invalid credentials"), b""),
            );
        }
    }

    #[test]
    fn bytes() {
        let request = SaslAuthenticateRequest {
            auth_bytes: ByteBuf::from(b"\0u\0p".to_vec()),
        };
        let frame = encode_request::<SaslAuthenticate>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 0, 0, 4, 0, b'u', 0, b'p']);
        let frame = encode_request::<SaslAuthenticate>(2, 0, None, &request).unwrap();
        assert_eq!(&frame[15..], &[5, 0, b'u', 0, b'p', 0]);
        // v2 response: corr 7, header tags, no error, null message, token "ok", lifetime 1000.
        #[rustfmt::skip]
        let frame = [
            0, 0, 0, 7, 0,
            0, 0,
            0,
            3, b'o', b'k',
            0, 0, 0, 0, 0, 0, 3, 0xe8,
            0,
        ];
        let (corr, r) = decode_response::<SaslAuthenticate>(2, &frame).unwrap();
        assert_eq!(corr, 7);
        assert_eq!(r.auth_bytes.as_ref(), b"ok");
        assert_eq!((r.error_message, r.session_lifetime_ms), (None, 1000));
    }
}
