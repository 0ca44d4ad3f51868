//! EndTxn (key 26): commit or abort a transaction at its coordinator.
//!
//! Versions 0-4: 1 same as 0; 2 PRODUCER_FENCED; 3 flexible; 4 TRANSACTION_ABORTABLE. (5, which
//! bumps the epoch on every transaction, KIP-890 part 2, goes with Produce's implicit
//! AddPartitionsToTxn; ferrokafka adds partitions itself.)

use super::Api;
use crate::kafka_struct;

pub struct EndTxn;

impl Api for EndTxn {
    const NAME: &'static str = "EndTxn";
    const KEY: i16 = 26;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = EndTxnRequest;
    type Response = EndTxnResponse;
}

kafka_struct! {
    pub struct EndTxnRequest {
        transactional_id: String [0, _],
        producer_id: i64 [0, _],
        producer_epoch: i16 [0, _],
        committed: bool [0, _],
    }
}

kafka_struct! {
    pub struct EndTxnResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(v in 0i16..=4, id: i64, epoch: i16, committed: bool, code: i16) {
            let request = EndTxnRequest {
                transactional_id: "tx".into(),
                producer_id: id,
                producer_epoch: epoch,
                committed,
            };
            let response = EndTxnResponse { throttle_time_ms: 0, error_code: code };
            assert_round_trip::<EndTxn>(v, &request, &response);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        let response = EndTxnResponse {
            throttle_time_ms: 1,
            error_code: 48,
        };
        for v in 0..=4 {
            assert_truncations_fail::<EndTxn>(v, &response);
        }
    }

    #[test]
    fn request_bytes() {
        let request = EndTxnRequest {
            transactional_id: "tx".into(),
            producer_id: 7,
            producer_epoch: 1,
            committed: true,
        };
        let frame = encode_request::<EndTxn>(0, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 2, b't', b'x', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1]
        );
        let frame = encode_request::<EndTxn>(3, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 3, b't', b'x', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1, 0]
        );
    }
}
