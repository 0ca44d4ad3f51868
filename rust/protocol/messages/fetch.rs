//! Fetch (key 1): read record batches from partition leaders (or a preferred read replica).
//!
//! Versions 4-18: 4 is Kafka 4.x's floor (KIP-896) and brings isolation levels and aborted
//! transactions; 7 fetch sessions (KIP-227); 9 current leader epochs (KIP-320); 11 rack-aware
//! follower fetching (KIP-392); 12 flexible, diverging epochs and current-leader hints; 13 topic
//! ids instead of names (KIP-516); 15 replica state; 16 node endpoints (KIP-951); 17 directory
//! ids; 18 a high-watermark tag (followers only).
//!
//! A partition's `records` stay raw bytes here (the record-batch decoder turns them into
//! records), and a decode leaves them in the frame: [`decode_in_frame`] gives each partition's
//! records as their place in the frame ([`FetchRecords::InFrame`]), so the consumer reads them
//! where they were received instead of from a copy.

use std::ops::Range;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_bytes::ByteBuf;

use super::common::{LeaderIdAndEpoch, NodeEndpoint};
use super::{read_response, Api};
use crate::kafka_struct;
use crate::protocol::codec::{prefix_size, put_length, Reader, Uuid, Version, Wire};
use crate::protocol::error::Result;

pub struct Fetch;

impl Api for Fetch {
    const NAME: &'static str = "Fetch";
    const KEY: i16 = 1;
    const MIN_VERSION: i16 = 4;
    const MAX_VERSION: i16 = 18;
    const FIRST_FLEXIBLE: i16 = 12;
    type Request = FetchRequest;
    type Response = FetchResponse;

    /// Copies each partition's records out of the frame: the generic decode's response owns
    /// its values, as every other API's does.
    fn detach(response: &mut FetchResponse, frame: &[u8]) {
        detach_records::<Self>(response, frame);
    }
}

impl RecordsInFrame for Fetch {
    fn records_mut(response: &mut FetchResponse) -> Vec<&mut Option<FetchRecords>> {
        response
            .responses
            .iter_mut()
            .flat_map(|t| t.partitions.iter_mut())
            .map(|p| &mut p.records)
            .collect()
    }
}

/// A response whose partitions' records the decoder leaves in the frame (Fetch's and
/// ShareFetch's: [`FetchRecords`] is their `records` field's type).
pub trait RecordsInFrame: Api {
    /// Every partition's records, in order (topics, then their partitions).
    fn records_mut(response: &mut Self::Response) -> Vec<&mut Option<FetchRecords>>;
}

/// A response frame (without its size prefix) decoded with every partition's records left in
/// the frame: each is [`FetchRecords::InFrame`], its byte range in `frame`. The consumers'
/// path: the records are then read in place, shared with the received frame.
pub fn decode_in_frame<A: RecordsInFrame>(
    version: i16,
    frame: &[u8],
) -> Result<(i32, A::Response)> {
    read_response::<A>(version, frame)
}

/// Every partition's records, in order (topics, then their partitions), each taken out of the
/// response (left None).
pub fn take_records<A: RecordsInFrame>(response: &mut A::Response) -> Vec<Option<FetchRecords>> {
    A::records_mut(response)
        .into_iter()
        .map(Option::take)
        .collect()
}

/// Copies every partition's records still in `frame` out of it ([`Api::detach`]).
pub(super) fn detach_records<A: RecordsInFrame>(response: &mut A::Response, frame: &[u8]) {
    for slot in A::records_mut(response) {
        if let Some(FetchRecords::InFrame(span)) = slot {
            let bytes = ByteBuf::from(frame[span.clone()].to_vec());
            *slot = Some(FetchRecords::Bytes(bytes));
        }
    }
}

/// One partition's record batches in a Fetch or ShareFetch response (Kafka's nullable `records`
/// bytes).
#[derive(Debug, Clone, PartialEq)]
pub enum FetchRecords {
    /// Where they lie in the frame that was decoded (byte offsets from its first byte): what
    /// the decoder yields, bytes left where they were received.
    InFrame(Range<usize>),
    /// The bytes themselves: what is encoded (fake brokers, tests) and what the generic decode
    /// gives ([`Api::detach`]).
    Bytes(ByteBuf),
}

impl Wire for Option<FetchRecords> {
    /// Reads the length and steps over the bytes, recording where they are: no copy. `r`
    /// reads the whole frame (`records` is a field of the body, never a tagged field, whose
    /// reader would be its own), so its position is the offset in the frame.
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        let Some(n) = r.length(v, true, 1, "bytes")? else {
            return Ok(None);
        };
        let start = r.position();
        r.take(n, "bytes")?;
        Ok(Some(FetchRecords::InFrame(start..start + n)))
    }

    /// # Panics
    /// On records still in their frame: a decoded response is detached ([`Api::detach`])
    /// before it can be encoded.
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        match self {
            None => put_length(w, v, true, None),
            Some(FetchRecords::Bytes(b)) => {
                put_length(w, v, true, Some(b.len()));
                w.extend_from_slice(b);
            }
            Some(FetchRecords::InFrame(span)) => {
                panic!("Fetch records at {span:?} of a frame not given: detach the response first")
            }
        }
    }

    fn min_size(v: Version) -> usize {
        prefix_size(v, false)
    }
}

/// As bytes (Python's `bytes`), like every other bytes field.
impl Serialize for FetchRecords {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            FetchRecords::Bytes(b) => s.serialize_bytes(b),
            FetchRecords::InFrame(span) => Err(serde::ser::Error::custom(format!(
                "Fetch records at {span:?} of a frame not given: detach the response first"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for FetchRecords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        ByteBuf::deserialize(d).map(FetchRecords::Bytes)
    }
}

kafka_struct! {
    pub struct ReplicaState {
        replica_id: i32 [15, _] = -1,
        replica_epoch: i64 [15, _] = -1,
    }
}

kafka_struct! {
    pub struct FetchPartition {
        partition: i32 [0, _],
        current_leader_epoch: i32 [9, _] = -1,
        fetch_offset: i64 [0, _],
        last_fetched_epoch: i32 [12, _] = -1,
        log_start_offset: i64 [5, _] = -1,
        partition_max_bytes: i32 [0, _],
    }
    tagged {
        replica_directory_id: Uuid = 0 [17, _],
        high_watermark: i64 = 1 [18, _],
    }
}

kafka_struct! {
    pub struct FetchTopic {
        topic: String [0, 12],
        topic_id: Uuid [13, _],
        partitions: Vec<FetchPartition> [0, _],
    }
}

kafka_struct! {
    pub struct ForgottenTopic {
        topic: String [7, 12],
        topic_id: Uuid [13, _],
        partitions: Vec<i32> [7, _],
    }
}

kafka_struct! {
    pub struct FetchRequest {
        replica_id: i32 [0, 14] = -1,
        max_wait_ms: i32 [0, _],
        min_bytes: i32 [0, _],
        max_bytes: i32 [3, _] = i32::MAX,
        isolation_level: i8 [4, _],
        session_id: i32 [7, _],
        session_epoch: i32 [7, _] = -1,
        topics: Vec<FetchTopic> [0, _],
        forgotten_topics_data: Vec<ForgottenTopic> [7, _],
        rack_id: String [11, _],
    }
    tagged {
        cluster_id: String = 0 [12, _],
        replica_state: ReplicaState = 1 [15, _],
    }
}

kafka_struct! {
    pub struct EpochEndOffset {
        epoch: i32 [12, _] = -1,
        end_offset: i64 [12, _] = -1,
    }
}

kafka_struct! {
    pub struct SnapshotId {
        end_offset: i64 [0, _] = -1,
        epoch: i32 [0, _] = -1,
    }
}

kafka_struct! {
    pub struct AbortedTransaction {
        producer_id: i64 [4, _],
        first_offset: i64 [4, _],
    }
}

kafka_struct! {
    pub struct PartitionData {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        high_watermark: i64 [0, _],
        last_stable_offset: i64 [4, _] = -1,
        log_start_offset: i64 [5, _] = -1,
        aborted_transactions: Option<Vec<AbortedTransaction>> [4, _],
        preferred_read_replica: i32 [11, _] = -1,
        records: Option<FetchRecords> [0, _],
    }
    tagged {
        diverging_epoch: EpochEndOffset = 0 [12, _],
        current_leader: LeaderIdAndEpoch = 1 [12, _],
        snapshot_id: SnapshotId = 2 [12, _],
    }
}

kafka_struct! {
    pub struct FetchableTopicResponse {
        topic: String [0, 12],
        topic_id: Uuid [13, _],
        partitions: Vec<PartitionData> [0, _],
    }
}

kafka_struct! {
    pub struct FetchResponse {
        throttle_time_ms: i32 [1, _],
        error_code: i16 [7, _],
        session_id: i32 [7, _],
        responses: Vec<FetchableTopicResponse> [0, _],
    }
    tagged {
        node_endpoints: Vec<NodeEndpoint> = 0 [16, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::super::{decode_response, encode_request, encode_response};
    use super::*;
    use proptest::prelude::*;

    fn request(version: i16, offset: i64, topic: &str, id: [u8; 16]) -> FetchRequest {
        FetchRequest {
            max_wait_ms: 500,
            min_bytes: 1,
            max_bytes: 52428800,
            isolation_level: 1,
            session_id: if version >= 7 { 7 } else { 0 },
            session_epoch: if version >= 7 { 2 } else { -1 },
            topics: vec![FetchTopic {
                topic: if version <= 12 {
                    topic.into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid(id)
                } else {
                    Uuid::default()
                },
                partitions: vec![FetchPartition {
                    partition: 3,
                    current_leader_epoch: if version >= 9 { 5 } else { -1 },
                    fetch_offset: offset,
                    last_fetched_epoch: if version >= 12 { 4 } else { -1 },
                    log_start_offset: if version >= 5 { 0 } else { -1 },
                    partition_max_bytes: 1048576,
                    high_watermark: if version >= 18 { Some(99) } else { None },
                    ..Default::default()
                }],
            }],
            rack_id: if version >= 11 {
                "r1".into()
            } else {
                String::new()
            },
            ..Default::default()
        }
    }

    fn response(version: i16, records: Option<Vec<u8>>, aborted: bool) -> FetchResponse {
        FetchResponse {
            throttle_time_ms: 0,
            error_code: 0,
            session_id: if version >= 7 { 7 } else { 0 },
            responses: vec![FetchableTopicResponse {
                topic: if version <= 12 {
                    "t".into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid([9; 16])
                } else {
                    Uuid::default()
                },
                partitions: vec![PartitionData {
                    partition_index: 3,
                    high_watermark: 100,
                    last_stable_offset: 90,
                    log_start_offset: if version >= 5 { 1 } else { -1 },
                    aborted_transactions: aborted.then(|| {
                        vec![AbortedTransaction {
                            producer_id: 12,
                            first_offset: 40,
                        }]
                    }),
                    preferred_read_replica: if version >= 11 { 2 } else { -1 },
                    records: records.map(|r| FetchRecords::Bytes(ByteBuf::from(r))),
                    current_leader: (version >= 12).then_some(LeaderIdAndEpoch {
                        leader_id: 1,
                        leader_epoch: 5,
                    }),
                    ..Default::default()
                }],
            }],
            node_endpoints: (version >= 16).then(|| {
                vec![NodeEndpoint {
                    node_id: 1,
                    host: "h".into(),
                    port: 9092,
                    rack: None,
                }]
            }),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            version in 4i16..=18,
            offset in any::<i64>(),
            topic in "[a-z]{1,12}",
            id: [u8; 16],
            records in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
            aborted: bool,
        ) {
            assert_round_trip::<Fetch>(
                version,
                &request(version, offset, &topic, id),
                &response(version, records, aborted),
            );
        }
    }

    /// Several topics, each partition's records present or null.
    fn response_of(version: i16, topics: &[Vec<Option<Vec<u8>>>]) -> FetchResponse {
        let mut out = response(version, None, false);
        let template = out.responses[0].partitions[0].clone();
        out.responses = topics
            .iter()
            .map(|records| FetchableTopicResponse {
                partitions: records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| PartitionData {
                        partition_index: i as i32,
                        records: r.clone().map(|r| FetchRecords::Bytes(ByteBuf::from(r))),
                        ..template.clone()
                    })
                    .collect(),
                ..out.responses[0].clone()
            })
            .collect();
        out
    }

    proptest! {
        #[test]
        fn records_decode_to_their_place_in_the_frame(
            version in 4i16..=18,
            topics in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..100)),
                    0..4,
                ),
                0..3,
            ),
        ) {
            let sent = response_of(version, &topics);
            let frame = encode_response::<Fetch>(version, 9, &sent).unwrap();
            let body = &frame[4..];
            let (corr, mut decoded) = decode_in_frame::<Fetch>(version, body).unwrap();
            prop_assert_eq!(corr, 9);
            let records = take_records::<Fetch>(&mut decoded);
            let want: Vec<Option<Vec<u8>>> = topics.iter().flatten().cloned().collect();
            prop_assert_eq!(records.len(), want.len());
            for (got, want) in records.iter().zip(&want) {
                match (got, want) {
                    (None, None) => {}
                    (Some(FetchRecords::InFrame(span)), Some(want)) => {
                        prop_assert_eq!(&body[span.clone()], &want[..]);
                    }
                    other => prop_assert!(false, "{:?}", other),
                }
            }
            // Taken out, the rest is what was sent without records; the generic decode gives
            // the records as bytes.
            let mut without = sent.clone();
            take_records::<Fetch>(&mut without);
            prop_assert_eq!(&decoded, &without);
            prop_assert_eq!(decode_response::<Fetch>(version, body).unwrap().1, sent);
        }
    }

    #[test]
    #[should_panic(expected = "detach the response first")]
    fn records_left_in_a_frame_are_not_encoded() {
        let sent = response(12, Some(vec![1, 2, 3]), false);
        let frame = encode_response::<Fetch>(12, 1, &sent).unwrap();
        let (_, decoded) = decode_in_frame::<Fetch>(12, &frame[4..]).unwrap();
        let _ = encode_response::<Fetch>(12, 1, &decoded);
    }

    #[test]
    fn truncated_responses_fail() {
        for version in 4..=18 {
            assert_truncations_fail::<Fetch>(
                version,
                &response(version, Some(vec![1, 2, 3]), true),
            );
        }
    }

    #[test]
    fn v4_request_bytes() {
        let req = FetchRequest {
            max_wait_ms: 1,
            min_bytes: 2,
            max_bytes: 3,
            isolation_level: 1,
            topics: vec![FetchTopic {
                topic: "t".into(),
                partitions: vec![FetchPartition {
                    partition: 0,
                    fetch_offset: 5,
                    partition_max_bytes: 6,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let frame = encode_request::<Fetch>(4, 0, None, &req).unwrap();
        #[rustfmt::skip]
        let body: &[u8] = &[
            0xff, 0xff, 0xff, 0xff, // replica_id -1
            0, 0, 0, 1,             // max_wait_ms
            0, 0, 0, 2,             // min_bytes
            0, 0, 0, 3,             // max_bytes (v3+)
            1,                      // isolation_level (v4+)
            0, 0, 0, 1,             // topics: 1
            0, 1, b't',             //   topic "t"
            0, 0, 0, 1,             //   partitions: 1
            0, 0, 0, 0,             //     partition 0
            0, 0, 0, 0, 0, 0, 0, 5, //     fetch_offset 5
            0, 0, 0, 6,             //     partition_max_bytes 6
        ];
        // size(4) + header v1 with null client id (2+2+4+2) = 14 bytes before the body.
        assert_eq!(&frame[14..], body);
    }
}
