//! InitProducerId (key 22): a producer id and epoch for idempotent and transactional
//! producers.
//!
//! Versions 0-6: 1 same as 0; 2 flexible; 3 an existing id/epoch to bump (KIP-360); 4-5 new
//! error codes only; 6 two-phase commit (KIP-939; "unstable" in Kafka 4.0-4.2, which advertise
//! up to 5). Kafka 3.x speaks up to 5.

use super::Api;
use crate::kafka_struct;

pub struct InitProducerId;

impl Api for InitProducerId {
    const NAME: &'static str = "InitProducerId";
    const KEY: i16 = 22;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = InitProducerIdRequest;
    type Response = InitProducerIdResponse;
}

kafka_struct! {
    /// `transactional_id: None` asks for an idempotent-only producer id.
    pub struct InitProducerIdRequest {
        transactional_id: Option<String> [0, _],
        transaction_timeout_ms: i32 [0, _],
        producer_id: i64 [3, _] = -1,
        producer_epoch: i16 [3, _] = -1,
        enable_2pc: bool [6, _],
        keep_prepared_txn: bool [6, _],
    }
}

kafka_struct! {
    pub struct InitProducerIdResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        producer_id: i64 [0, _] = -1,
        producer_epoch: i16 [0, _],
        ongoing_txn_producer_id: i64 [6, _] = -1,
        ongoing_txn_producer_epoch: i16 [6, _] = -1,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, id: i64, epoch: i16) -> InitProducerIdResponse {
        InitProducerIdResponse {
            throttle_time_ms: 0,
            error_code: 0,
            producer_id: id,
            producer_epoch: epoch,
            ongoing_txn_producer_id: if v >= 6 { 77 } else { -1 },
            ongoing_txn_producer_epoch: if v >= 6 { 1 } else { -1 },
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=6,
            txn in proptest::option::of("[a-z]{1,10}"),
            timeout: i32,
            id: i64,
            epoch: i16,
            two_pc: bool,
        ) {
            let request = InitProducerIdRequest {
                transactional_id: txn,
                transaction_timeout_ms: timeout,
                producer_id: if v >= 3 { id } else { -1 },
                producer_epoch: if v >= 3 { epoch } else { -1 },
                enable_2pc: two_pc && v >= 6,
                keep_prepared_txn: false,
            };
            assert_round_trip::<InitProducerId>(v, &request, &response(v, id, epoch));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=6 {
            assert_truncations_fail::<InitProducerId>(v, &response(v, 1000, 0));
        }
    }

    #[test]
    fn bytes() {
        let request = InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: 60_000,
            ..Default::default()
        };
        let frame = encode_request::<InitProducerId>(0, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0xff, 0xff, 0, 0, 0xea, 0x60]);
        #[rustfmt::skip]
        let expected: &[u8] = &[
            0,                                              // header tags
            0,                                              // transactional_id null
            0, 0, 0xea, 0x60,                               // timeout 60000
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // producer_id -1
            0xff, 0xff,                                     // producer_epoch -1
            0,                                              // tags
        ];
        let frame = encode_request::<InitProducerId>(4, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], expected);

        // v4 response: corr 1, header tags, throttle 0, error 0, id 1000, epoch 0, tags.
        let body = [
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0,
        ];
        let (_, r) = decode_response::<InitProducerId>(4, &body).unwrap();
        assert_eq!((r.producer_id, r.producer_epoch), (1000, 0));
    }
}
