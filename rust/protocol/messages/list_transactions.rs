//! ListTransactions (key 66): the transactional ids a broker coordinates, with their producer
//! id and state, filtered by state, producer id and (v1) how long they have been open. Sent to
//! every broker.
//!
//! Versions 0-1: flexible from 0; 1 the duration filter.

use super::Api;
use crate::kafka_struct;

pub struct ListTransactions;

impl Api for ListTransactions {
    const NAME: &'static str = "ListTransactions";
    const KEY: i16 = 66;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ListTransactionsRequest;
    type Response = ListTransactionsResponse;
}

kafka_struct! {
    /// Empty filters match everything; `duration_filter` -1 too.
    pub struct ListTransactionsRequest {
        state_filters: Vec<String> [0, _],
        producer_id_filters: Vec<i64> [0, _],
        duration_filter: i64 [1, _] = -1,
    }
}

kafka_struct! {
    pub struct ListedTransaction {
        transactional_id: String [0, _],
        producer_id: i64 [0, _],
        transaction_state: String [0, _],
    }
}

kafka_struct! {
    pub struct ListTransactionsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        unknown_state_filters: Vec<String> [0, _],
        transaction_states: Vec<ListedTransaction> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(id: String, producer: i64) -> ListTransactionsResponse {
        ListTransactionsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            unknown_state_filters: vec!["Nope".into()],
            transaction_states: vec![ListedTransaction {
                transactional_id: id,
                producer_id: producer,
                transaction_state: "Ongoing".into(),
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 0i16..=1, id in "[a-z]{1,10}", producer: i64, duration: i64) {
            let request = ListTransactionsRequest {
                state_filters: vec!["Ongoing".into()],
                producer_id_filters: vec![producer],
                duration_filter: if v >= 1 { duration } else { -1 },
            };
            assert_round_trip::<ListTransactions>(v, &request, &response(id, producer));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<ListTransactions>(v, &response("tx".into(), 3));
        }
    }

    #[test]
    fn request_bytes() {
        let everything = ListTransactionsRequest::default();
        let frame = encode_request::<ListTransactions>(1, 0, None, &everything).unwrap();
        // header tags, [], [], duration -1, tags
        let mut body = vec![0, 1, 1];
        body.extend_from_slice(&(-1i64).to_be_bytes());
        body.push(0);
        assert_eq!(&frame[14..], &body[..]);
    }
}
