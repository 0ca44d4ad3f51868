//! ShareFetch (key 78): a share group member takes records from its partitions' leaders, and
//! acknowledges earlier ones in the same request (KIP-932).
//!
//! Versions 1-2, flexible (Kafka 4.2; the early-access version 0 is gone). A share session
//! (epoch 0 opens it, then each request increments it, -1 closes it) keeps the partitions
//! between requests, as a fetch session does. `max_records` bounds what one response acquires
//! and `batch_size` how many records each acquired batch holds. Version 2 adds
//! `share_acquire_mode` (0 batch-optimized, 1 record limit) and `is_renew_ack` (the
//! acknowledgements only renew acquisition locks, KIP-1222). An acknowledgement batch covers
//! `first_offset..=last_offset` with one type for all, or one per offset: 0 gap, 1 accept,
//! 2 release, 3 reject, 4 renew.
//!
//! A partition's `acquired_records` are the offset ranges this member now holds under lock,
//! each with its delivery count; `records` stays raw bytes here, as Fetch's, and a decode
//! leaves them in the frame the same way ([`super::fetch::decode_in_frame`]): they may hold
//! records outside those ranges, which are not the member's.

use super::common::{AcknowledgementBatch, LeaderIdAndEpoch, NodeEndpoint};
use super::fetch::{detach_records, FetchRecords, RecordsInFrame};
use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct ShareFetch;

impl Api for ShareFetch {
    const NAME: &'static str = "ShareFetch";
    const KEY: i16 = 78;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ShareFetchRequest;
    type Response = ShareFetchResponse;

    /// Copies each partition's records out of the frame, as Fetch's.
    fn detach(response: &mut ShareFetchResponse, frame: &[u8]) {
        detach_records::<Self>(response, frame);
    }
}

impl RecordsInFrame for ShareFetch {
    fn records_mut(response: &mut ShareFetchResponse) -> Vec<&mut Option<FetchRecords>> {
        response
            .responses
            .iter_mut()
            .flat_map(|t| t.partitions.iter_mut())
            .map(|p| &mut p.records)
            .collect()
    }
}

kafka_struct! {
    pub struct ShareFetchPartition {
        partition_index: i32 [0, _],
        acknowledgement_batches: Vec<AcknowledgementBatch> [0, _],
    }
}

kafka_struct! {
    pub struct ShareFetchTopic {
        topic_id: Uuid [0, _],
        partitions: Vec<ShareFetchPartition> [0, _],
    }
}

kafka_struct! {
    pub struct ShareForgottenTopic {
        topic_id: Uuid [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct ShareFetchRequest {
        group_id: Option<String> [0, _],
        member_id: Option<String> [0, _],
        share_session_epoch: i32 [0, _],
        max_wait_ms: i32 [0, _],
        min_bytes: i32 [0, _],
        max_bytes: i32 [0, _] = 0x7fff_ffff,
        max_records: i32 [0, _],
        batch_size: i32 [0, _],
        share_acquire_mode: i8 [2, _],
        is_renew_ack: bool [2, _],
        topics: Vec<ShareFetchTopic> [0, _],
        forgotten_topics_data: Vec<ShareForgottenTopic> [0, _],
    }
}

kafka_struct! {
    pub struct AcquiredRecords {
        first_offset: i64 [0, _],
        last_offset: i64 [0, _],
        delivery_count: i16 [0, _],
    }
}

kafka_struct! {
    pub struct SharePartitionData {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        acknowledge_error_code: i16 [0, _],
        acknowledge_error_message: Option<String> [0, _],
        current_leader: LeaderIdAndEpoch [0, _],
        records: Option<FetchRecords> [0, _],
        acquired_records: Vec<AcquiredRecords> [0, _],
    }
}

kafka_struct! {
    pub struct ShareFetchableTopicResponse {
        topic_id: Uuid [0, _],
        partitions: Vec<SharePartitionData> [0, _],
    }
}

kafka_struct! {
    pub struct ShareFetchResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        acquisition_lock_timeout_ms: i32 [0, _],
        responses: Vec<ShareFetchableTopicResponse> [0, _],
        node_endpoints: Vec<NodeEndpoint> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;
    use serde_bytes::ByteBuf;

    fn response(records: Option<Vec<u8>>, count: i16) -> ShareFetchResponse {
        ShareFetchResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            acquisition_lock_timeout_ms: 30_000,
            responses: vec![ShareFetchableTopicResponse {
                topic_id: Uuid([7; 16]),
                partitions: vec![SharePartitionData {
                    partition_index: 1,
                    error_code: 0,
                    error_message: None,
                    acknowledge_error_code: 0,
                    acknowledge_error_message: Some("ack".into()),
                    current_leader: LeaderIdAndEpoch {
                        leader_id: 1,
                        leader_epoch: 3,
                    },
                    records: records.map(|r| FetchRecords::Bytes(ByteBuf::from(r))),
                    acquired_records: vec![AcquiredRecords {
                        first_offset: 10,
                        last_offset: 19,
                        delivery_count: count,
                    }],
                }],
            }],
            node_endpoints: vec![NodeEndpoint {
                node_id: 1,
                host: "h".into(),
                port: 9092,
                rack: None,
            }],
        }
    }

    fn request(v: i16, types: Vec<i8>, epoch: i32) -> ShareFetchRequest {
        ShareFetchRequest {
            group_id: Some("g".into()),
            member_id: Some("m".into()),
            share_session_epoch: epoch,
            max_wait_ms: 500,
            min_bytes: 1,
            max_bytes: 1 << 20,
            max_records: 500,
            batch_size: 500,
            share_acquire_mode: if v >= 2 { 1 } else { 0 },
            is_renew_ack: v >= 2 && types.contains(&4),
            topics: vec![ShareFetchTopic {
                topic_id: Uuid([7; 16]),
                partitions: vec![ShareFetchPartition {
                    partition_index: 1,
                    acknowledgement_batches: vec![AcknowledgementBatch {
                        first_offset: 0,
                        last_offset: types.len() as i64 - 1,
                        acknowledge_types: types,
                    }],
                }],
            }],
            forgotten_topics_data: vec![ShareForgottenTopic {
                topic_id: Uuid([8; 16]),
                partitions: vec![0, 3],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=2,
            types in proptest::collection::vec(0i8..=4, 1..6),
            epoch in -1i32..10,
            records in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..100)),
            count in 1i16..10,
        ) {
            assert_round_trip::<ShareFetch>(v, &request(v, types, epoch), &response(records, count));
        }
    }

    #[test]
    fn records_are_left_in_the_frame() {
        use super::super::fetch::{decode_in_frame, take_records};
        use super::super::{decode_response, encode_response};
        for v in 1..=2 {
            let sent = response(Some(vec![5, 6, 7, 8]), 2);
            let frame = encode_response::<ShareFetch>(v, 4, &sent).unwrap();
            let body = &frame[4..];
            let (_, mut decoded) = decode_in_frame::<ShareFetch>(v, body).unwrap();
            match &take_records::<ShareFetch>(&mut decoded)[..] {
                [Some(FetchRecords::InFrame(span))] => {
                    assert_eq!(&body[span.clone()], [5, 6, 7, 8])
                }
                other => panic!("{other:?}"),
            }
            // The generic decode copies them out: the response is what was sent.
            assert_eq!(decode_response::<ShareFetch>(v, body).unwrap().1, sent);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=2 {
            assert_truncations_fail::<ShareFetch>(v, &response(Some(vec![1, 2, 3]), 2));
        }
    }
}
