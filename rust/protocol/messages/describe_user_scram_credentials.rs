//! DescribeUserScramCredentials (key 50): which SCRAM mechanisms (1 SHA-256, 2 SHA-512) each
//! user has credentials for, with their iteration counts (never the credentials).
//!
//! Version 0 only (flexible).

use super::Api;
use crate::kafka_struct;

pub struct DescribeUserScramCredentials;

impl Api for DescribeUserScramCredentials {
    const NAME: &'static str = "DescribeUserScramCredentials";
    const KEY: i16 = 50;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DescribeUserScramCredentialsRequest;
    type Response = DescribeUserScramCredentialsResponse;
}

kafka_struct! {
    pub struct ScramUserName {
        name: String [0, _],
    }
}

kafka_struct! {
    /// `users: None` describes every user with credentials.
    pub struct DescribeUserScramCredentialsRequest {
        users: Option<Vec<ScramUserName>> [0, _],
    }
}

kafka_struct! {
    pub struct ScramCredentialInfo {
        mechanism: i8 [0, _],
        iterations: i32 [0, _],
    }
}

kafka_struct! {
    pub struct DescribeUserScramCredentialsResult {
        user: String [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        credential_infos: Vec<ScramCredentialInfo> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeUserScramCredentialsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        results: Vec<DescribeUserScramCredentialsResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(user: String, iterations: i32) -> DescribeUserScramCredentialsResponse {
        DescribeUserScramCredentialsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            results: vec![DescribeUserScramCredentialsResult {
                user,
                error_code: 0,
                error_message: None,
                credential_infos: vec![ScramCredentialInfo {
                    mechanism: 2,
                    iterations,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(every: bool, user in "[a-z]{1,8}", iterations: i32) {
            let request = DescribeUserScramCredentialsRequest {
                users: if every { None } else { Some(vec![ScramUserName { name: user.clone() }]) },
            };
            assert_round_trip::<DescribeUserScramCredentials>(0, &request, &response(user, iterations));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<DescribeUserScramCredentials>(0, &response("u".into(), 4096));
    }

    #[test]
    fn request_bytes() {
        let every = DescribeUserScramCredentialsRequest { users: None };
        let frame = encode_request::<DescribeUserScramCredentials>(0, 0, None, &every).unwrap();
        assert_eq!(&frame[14..], &[0, 0, 0]); // header tags, null array, tags
    }
}
