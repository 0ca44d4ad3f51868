//! AddOffsetsToTxn (key 25): a transactional producer tells its transaction coordinator that
//! the transaction will commit offsets of a consumer group (TxnOffsetCommit follows, to the
//! group's coordinator).
//!
//! Versions 0-4: 1 same as 0; 2 PRODUCER_FENCED; 3 flexible; 4 TRANSACTION_ABORTABLE.

use super::Api;
use crate::kafka_struct;

pub struct AddOffsetsToTxn;

impl Api for AddOffsetsToTxn {
    const NAME: &'static str = "AddOffsetsToTxn";
    const KEY: i16 = 25;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = AddOffsetsToTxnRequest;
    type Response = AddOffsetsToTxnResponse;
}

kafka_struct! {
    pub struct AddOffsetsToTxnRequest {
        transactional_id: String [0, _],
        producer_id: i64 [0, _],
        producer_epoch: i16 [0, _],
        group_id: String [0, _],
    }
}

kafka_struct! {
    pub struct AddOffsetsToTxnResponse {
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
        fn round_trips(v in 0i16..=4, id: i64, epoch: i16, group in "[a-z]{0,12}", code: i16) {
            let request = AddOffsetsToTxnRequest {
                transactional_id: "tx".into(),
                producer_id: id,
                producer_epoch: epoch,
                group_id: group,
            };
            let response = AddOffsetsToTxnResponse { throttle_time_ms: 0, error_code: code };
            assert_round_trip::<AddOffsetsToTxn>(v, &request, &response);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        let response = AddOffsetsToTxnResponse {
            throttle_time_ms: 1,
            error_code: 51,
        };
        for v in 0..=4 {
            assert_truncations_fail::<AddOffsetsToTxn>(v, &response);
        }
    }

    #[test]
    fn request_bytes() {
        let request = AddOffsetsToTxnRequest {
            transactional_id: "tx".into(),
            producer_id: 7,
            producer_epoch: 1,
            group_id: "g".into(),
        };
        let frame = encode_request::<AddOffsetsToTxn>(0, 0, None, &request).unwrap();
        let want = [0, 2, b't', b'x', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 0, 1, b'g'];
        assert_eq!(&frame[14..], &want);
        let frame = encode_request::<AddOffsetsToTxn>(3, 0, None, &request).unwrap();
        let want = [0, 3, b't', b'x', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 2, b'g', 0];
        assert_eq!(&frame[14..], &want);
    }
}
