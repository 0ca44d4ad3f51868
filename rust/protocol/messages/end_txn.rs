//! EndTxn (key 26): commit or abort a transaction at its coordinator.
//!
//! Versions 0-5: 1 same as 0; 2 PRODUCER_FENCED; 3 flexible; 4 TRANSACTION_ABORTABLE; 5
//! transaction version 2 (KIP-890 part 2): the coordinator bumps the producer's epoch at every
//! commit or abort and answers with the producer id and epoch to use next. A producer of
//! transaction version 1 sends at most 4.

use super::Api;
use crate::kafka_struct;

pub struct EndTxn;

impl Api for EndTxn {
    const NAME: &'static str = "EndTxn";
    const KEY: i16 = 26;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
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
        producer_id: i64 [5, _] = -1,
        producer_epoch: i16 [5, _] = -1,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(v in 0i16..=5, id: i64, epoch: i16, committed: bool, code: i16) {
            let request = EndTxnRequest {
                transactional_id: "tx".into(),
                producer_id: id,
                producer_epoch: epoch,
                committed,
            };
            let (next_id, next_epoch) = if v >= 5 { (id, epoch) } else { (-1, -1) };
            let response = EndTxnResponse {
                throttle_time_ms: 0,
                error_code: code,
                producer_id: next_id,
                producer_epoch: next_epoch,
            };
            assert_round_trip::<EndTxn>(v, &request, &response);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        let response = EndTxnResponse {
            throttle_time_ms: 1,
            error_code: 48,
            producer_id: 7,
            producer_epoch: 2,
        };
        for v in 0..=5 {
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

    #[test]
    fn v5_responses_carry_the_next_producer_id_and_epoch() {
        // Flexible header (correlation id, no tags), then throttle 0, error 0, id 9, epoch 4,
        // no tags.
        let mut frame = vec![0, 0, 0, 1, 0];
        frame.extend([0, 0, 0, 0, 0, 0]);
        frame.extend(9i64.to_be_bytes());
        frame.extend(4i16.to_be_bytes());
        frame.push(0);
        let (_, response) = decode_response::<EndTxn>(5, &frame).unwrap();
        assert_eq!((response.producer_id, response.producer_epoch), (9, 4));
        // Version 4 has neither field: the same answer without them reads as "none".
        let mut v4 = frame[..11].to_vec();
        v4.push(0);
        let (_, old) = decode_response::<EndTxn>(4, &v4).unwrap();
        assert_eq!((old.producer_id, old.producer_epoch), (-1, -1));
    }
}
