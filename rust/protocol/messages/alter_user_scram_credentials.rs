//! AlterUserScramCredentials (key 51): create, replace or delete users' SCRAM credentials. The
//! client sends the salt and the salted password (RFC 5802), never the password. KRaft
//! brokers forward it to the controller.
//!
//! Version 0 only (flexible).

use serde_bytes::ByteBuf;

use super::Api;
use crate::kafka_struct;

pub struct AlterUserScramCredentials;

impl Api for AlterUserScramCredentials {
    const NAME: &'static str = "AlterUserScramCredentials";
    const KEY: i16 = 51;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = AlterUserScramCredentialsRequest;
    type Response = AlterUserScramCredentialsResponse;
}

kafka_struct! {
    pub struct ScramCredentialDeletion {
        name: String [0, _],
        mechanism: i8 [0, _],
    }
}

kafka_struct! {
    pub struct ScramCredentialUpsertion {
        name: String [0, _],
        mechanism: i8 [0, _],
        iterations: i32 [0, _],
        salt: ByteBuf [0, _],
        salted_password: ByteBuf [0, _],
    }
}

kafka_struct! {
    pub struct AlterUserScramCredentialsRequest {
        deletions: Vec<ScramCredentialDeletion> [0, _],
        upsertions: Vec<ScramCredentialUpsertion> [0, _],
    }
}

kafka_struct! {
    pub struct AlterUserScramCredentialsResult {
        user: String [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct AlterUserScramCredentialsResponse {
        throttle_time_ms: i32 [0, _],
        results: Vec<AlterUserScramCredentialsResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, message: Option<String>) -> AlterUserScramCredentialsResponse {
        AlterUserScramCredentialsResponse {
            throttle_time_ms: 0,
            results: vec![AlterUserScramCredentialsResult {
                user: "u".into(),
                error_code: code,
                error_message: message,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            salt in proptest::collection::vec(any::<u8>(), 0..40),
            salted in proptest::collection::vec(any::<u8>(), 0..64),
            iterations: i32,
            code: i16,
            message in proptest::option::of("[a-z ]{0,12}"),
        ) {
            let request = AlterUserScramCredentialsRequest {
                deletions: vec![ScramCredentialDeletion { name: "old".into(), mechanism: 1 }],
                upsertions: vec![ScramCredentialUpsertion {
                    name: "u".into(),
                    mechanism: 2,
                    iterations,
                    salt: ByteBuf::from(salt),
                    salted_password: ByteBuf::from(salted),
                }],
            };
            assert_round_trip::<AlterUserScramCredentials>(0, &request, &response(code, message));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<AlterUserScramCredentials>(0, &response(57, Some("x".into())));
    }

    #[test]
    fn request_bytes() {
        let request = AlterUserScramCredentialsRequest {
            deletions: vec![],
            upsertions: vec![ScramCredentialUpsertion {
                name: "u".into(),
                mechanism: 1,
                iterations: 4096,
                salt: ByteBuf::from(vec![7]),
                salted_password: ByteBuf::from(vec![8, 9]),
            }],
        };
        let frame = encode_request::<AlterUserScramCredentials>(0, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 1, 2,                    // header tags, no deletions, upsertions [
            2, b'u', 1, 0, 0, 0x10, 0,  //   "u", SHA-256, 4096 iterations
            2, 7, 3, 8, 9,              //   salt, salted password
            0, 0,                       //   upsertion tags, body tags
        ];
        assert_eq!(&frame[14..], v0);
    }
}
