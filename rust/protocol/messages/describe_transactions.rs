//! DescribeTransactions (key 65): a transactional id's state as its transaction coordinator
//! holds it (producer id and epoch, timeout, start time, the partitions in the transaction).
//!
//! Version 0 only (flexible).

use super::Api;
use crate::kafka_struct;

pub struct DescribeTransactions;

impl Api for DescribeTransactions {
    const NAME: &'static str = "DescribeTransactions";
    const KEY: i16 = 65;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DescribeTransactionsRequest;
    type Response = DescribeTransactionsResponse;
}

kafka_struct! {
    pub struct DescribeTransactionsRequest {
        transactional_ids: Vec<String> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeTransactionsTopic {
        topic: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct DescribedTransaction {
        error_code: i16 [0, _],
        transactional_id: String [0, _],
        transaction_state: String [0, _],
        transaction_timeout_ms: i32 [0, _],
        transaction_start_time_ms: i64 [0, _],
        producer_id: i64 [0, _],
        producer_epoch: i16 [0, _],
        topics: Vec<DescribeTransactionsTopic> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeTransactionsResponse {
        throttle_time_ms: i32 [0, _],
        transaction_states: Vec<DescribedTransaction> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, producer: i64, epoch: i16) -> DescribeTransactionsResponse {
        DescribeTransactionsResponse {
            throttle_time_ms: 0,
            transaction_states: vec![DescribedTransaction {
                error_code: code,
                transactional_id: "tx".into(),
                transaction_state: "Ongoing".into(),
                transaction_timeout_ms: 60000,
                transaction_start_time_ms: 1_700_000_000_000,
                producer_id: producer,
                producer_epoch: epoch,
                topics: vec![DescribeTransactionsTopic {
                    topic: "t".into(),
                    partitions: vec![0, 2],
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(ids in proptest::collection::vec("[a-z]{1,8}", 0..3), code: i16, producer: i64, epoch: i16) {
            let request = DescribeTransactionsRequest { transactional_ids: ids };
            assert_round_trip::<DescribeTransactions>(0, &request, &response(code, producer, epoch));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<DescribeTransactions>(0, &response(0, 5, 1));
    }

    #[test]
    fn request_bytes() {
        let request = DescribeTransactionsRequest {
            transactional_ids: vec!["a".into()],
        };
        let frame = encode_request::<DescribeTransactions>(0, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, b'a', 0]);
    }
}
