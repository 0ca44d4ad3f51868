//! Produce (key 0): append record batches to partition leaders.
//!
//! Versions 3-12 by name (3 is Kafka 4.x's floor, KIP-896; 9 flexible; 10 current-leader hints
//! and node endpoints, KIP-951); 13 addresses topics by id (KIP-516, Kafka 4.1+).

use serde_bytes::ByteBuf;

use super::common::{LeaderIdAndEpoch, NodeEndpoint};
use super::{frame_size, Api};
use crate::kafka_struct;
use crate::protocol::codec::{put_length, put_tagged_fields, Uuid, Wire};
use crate::protocol::error::Result;
use crate::protocol::header::RequestHeader;

pub struct Produce;

impl Api for Produce {
    const NAME: &'static str = "Produce";
    const KEY: i16 = 0;
    const MIN_VERSION: i16 = 3;
    const MAX_VERSION: i16 = 13;
    const FIRST_FLEXIBLE: i16 = 9;
    type Request = ProduceRequest;
    type Response = ProduceResponse;
}

kafka_struct! {
    pub struct PartitionProduceData {
        index: i32 [0, _],
        records: Option<ByteBuf> [0, _],
    }
}

kafka_struct! {
    pub struct TopicProduceData {
        name: String [0, 12],
        topic_id: Uuid [13, _],
        partition_data: Vec<PartitionProduceData> [0, _],
    }
}

kafka_struct! {
    pub struct ProduceRequest {
        transactional_id: Option<String> [3, _],
        acks: i16 [0, _],
        timeout_ms: i32 [0, _],
        topic_data: Vec<TopicProduceData> [0, _],
    }
}

/// A Produce request whose record batches are borrowed: [`encode_spliced`] frames it without
/// copying them (a producer's request is mostly its batches, up to `max_request_size`).
#[derive(Debug, Clone, Default)]
pub struct ProduceRequestRef<'a> {
    pub transactional_id: Option<String>,
    pub acks: i16,
    pub timeout_ms: i32,
    pub topic_data: Vec<TopicProduceDataRef<'a>>,
}

#[derive(Debug, Clone, Default)]
pub struct TopicProduceDataRef<'a> {
    /// Versions 3-12 name the topic, 13 and later give its id.
    pub name: String,
    pub topic_id: Uuid,
    /// `(partition index, record batches)`.
    pub partition_data: Vec<(i32, Option<&'a [u8]>)>,
}

/// A request frame as its encoded fields (`scaffold`, size prefix included) with borrowed
/// byte runs to insert at offsets of it: the same bytes as one contiguous frame, written
/// once, straight into their destination.
#[derive(Debug)]
pub struct SplicedFrame<'a> {
    pub scaffold: Vec<u8>,
    /// `(offset in scaffold, bytes)`, offsets ascending.
    pub inserts: Vec<(usize, &'a [u8])>,
}

impl SplicedFrame<'_> {
    pub fn len(&self) -> usize {
        self.scaffold.len() + self.inserts.iter().map(|(_, b)| b.len()).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Write the whole frame into `out`, which is exactly [`Self::len`] bytes long.
    pub fn write_to(&self, out: &mut [u8]) {
        let mut from = 0;
        let mut at = 0;
        for (offset, bytes) in &self.inserts {
            let head = &self.scaffold[from..*offset];
            out[at..at + head.len()].copy_from_slice(head);
            at += head.len();
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
            from = *offset;
        }
        out[at..].copy_from_slice(&self.scaffold[from..]);
    }
}

/// Frame a Produce request as `encode_request::<Produce>` does, byte for byte, with the
/// record batches left in place (see [`SplicedFrame`]).
pub fn encode_spliced<'a>(
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    request: &ProduceRequestRef<'a>,
) -> Result<SplicedFrame<'a>> {
    let v = Produce::layout(version)?;
    let mut out = vec![0u8; 4];
    let mut inserts = Vec::new();
    RequestHeader {
        api_key: Produce::KEY,
        api_version: version,
        correlation_id,
        client_id: client_id.map(str::to_owned),
    }
    .write(&mut out, v.flexible);
    request.transactional_id.write(&mut out, v);
    request.acks.write(&mut out, v);
    request.timeout_ms.write(&mut out, v);
    put_length(&mut out, v, true, Some(request.topic_data.len()));
    let mut batches = 0usize;
    for topic in &request.topic_data {
        if version >= 13 {
            topic.topic_id.write(&mut out, v);
        } else {
            topic.name.write(&mut out, v);
        }
        put_length(&mut out, v, true, Some(topic.partition_data.len()));
        for (index, records) in &topic.partition_data {
            index.write(&mut out, v);
            put_length(&mut out, v, true, records.map(<[u8]>::len));
            if let Some(records) = records {
                inserts.push((out.len(), *records));
                batches += records.len();
            }
            if v.flexible {
                put_tagged_fields(&mut out, &[]);
            }
        }
        if v.flexible {
            put_tagged_fields(&mut out, &[]);
        }
    }
    if v.flexible {
        put_tagged_fields(&mut out, &[]);
    }
    let size = frame_size(out.len() - 4 + batches)?;
    out[..4].copy_from_slice(&size.to_be_bytes());
    Ok(SplicedFrame {
        scaffold: out,
        inserts,
    })
}

kafka_struct! {
    pub struct BatchIndexAndErrorMessage {
        batch_index: i32 [8, _],
        batch_index_error_message: Option<String> [8, _],
    }
}

kafka_struct! {
    pub struct PartitionProduceResponse {
        index: i32 [0, _],
        error_code: i16 [0, _],
        base_offset: i64 [0, _],
        log_append_time_ms: i64 [2, _] = -1,
        log_start_offset: i64 [5, _] = -1,
        record_errors: Vec<BatchIndexAndErrorMessage> [8, _],
        error_message: Option<String> [8, _],
    }
    tagged {
        current_leader: LeaderIdAndEpoch = 0 [10, _],
    }
}

kafka_struct! {
    pub struct TopicProduceResponse {
        name: String [0, 12],
        topic_id: Uuid [13, _],
        partition_responses: Vec<PartitionProduceResponse> [0, _],
    }
}

kafka_struct! {
    pub struct ProduceResponse {
        responses: Vec<TopicProduceResponse> [0, _],
        throttle_time_ms: i32 [1, _],
    }
    tagged {
        node_endpoints: Vec<NodeEndpoint> = 0 [10, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(version: i16, records: Vec<u8>, txn: Option<String>) -> ProduceRequest {
        ProduceRequest {
            transactional_id: txn,
            acks: -1,
            timeout_ms: 30000,
            topic_data: vec![TopicProduceData {
                name: if version <= 12 {
                    "t".into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid([3; 16])
                } else {
                    Uuid::default()
                },
                partition_data: vec![PartitionProduceData {
                    index: 1,
                    records: Some(ByteBuf::from(records)),
                }],
            }],
        }
    }

    fn response(version: i16, base_offset: i64) -> ProduceResponse {
        ProduceResponse {
            responses: vec![TopicProduceResponse {
                name: if version <= 12 {
                    "t".into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid([3; 16])
                } else {
                    Uuid::default()
                },
                partition_responses: vec![PartitionProduceResponse {
                    index: 1,
                    error_code: 0,
                    base_offset,
                    log_append_time_ms: -1,
                    log_start_offset: if version >= 5 { 0 } else { -1 },
                    record_errors: if version >= 8 {
                        vec![BatchIndexAndErrorMessage {
                            batch_index: 0,
                            batch_index_error_message: None,
                        }]
                    } else {
                        vec![]
                    },
                    error_message: None,
                    current_leader: (version >= 10).then_some(LeaderIdAndEpoch {
                        leader_id: 1,
                        leader_epoch: 2,
                    }),
                }],
            }],
            throttle_time_ms: 0,
            node_endpoints: None,
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            version in 3i16..=13,
            records in proptest::collection::vec(any::<u8>(), 0..200),
            txn in proptest::option::of("[a-z]{1,10}"),
            base_offset in any::<i64>(),
        ) {
            assert_round_trip::<Produce>(version, &request(version, records, txn), &response(version, base_offset));
        }
    }

    type Partitions = Vec<(i32, Option<Vec<u8>>)>;

    fn topics() -> impl Strategy<Value = Vec<(String, [u8; 16], Partitions)>> {
        let batch = proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300));
        let partitions = proptest::collection::vec((any::<i32>(), batch), 0..4);
        proptest::collection::vec(("[a-z.]{0,12}", any::<[u8; 16]>(), partitions), 0..4)
    }

    proptest! {
        #[test]
        fn spliced_frames_are_the_generic_encoders_bytes(
            version in 3i16..=13,
            correlation_id in any::<i32>(),
            client_id in proptest::option::of("[a-z-]{0,8}"),
            txn in proptest::option::of("[a-z]{0,10}"),
            acks in prop_oneof![Just(-1i16), Just(0), Just(1)],
            topic_data in topics(),
        ) {
            let owned = ProduceRequest {
                transactional_id: txn.clone(),
                acks,
                timeout_ms: 30000,
                topic_data: topic_data
                    .iter()
                    .map(|(name, id, parts)| TopicProduceData {
                        name: name.clone(),
                        topic_id: Uuid(*id),
                        partition_data: parts
                            .iter()
                            .map(|(index, records)| PartitionProduceData {
                                index: *index,
                                records: records.clone().map(ByteBuf::from),
                            })
                            .collect(),
                    })
                    .collect(),
            };
            let borrowed = ProduceRequestRef {
                transactional_id: txn,
                acks,
                timeout_ms: 30000,
                topic_data: topic_data
                    .iter()
                    .map(|(name, id, parts)| TopicProduceDataRef {
                        name: name.clone(),
                        topic_id: Uuid(*id),
                        partition_data: parts.iter().map(|(i, r)| (*i, r.as_deref())).collect(),
                    })
                    .collect(),
            };
            let client_id = client_id.as_deref();
            let want =
                super::super::encode_request::<Produce>(version, correlation_id, client_id, &owned)
                    .unwrap();
            let spliced = encode_spliced(version, correlation_id, client_id, &borrowed).unwrap();
            let mut got = vec![0xAA; spliced.len()];
            spliced.write_to(&mut got);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn spliced_frames_refuse_what_produce_does_not_support() {
        for version in [2, 14] {
            assert!(encode_spliced(version, 1, None, &ProduceRequestRef::default()).is_err());
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for version in 3..=13 {
            assert_truncations_fail::<Produce>(version, &response(version, 42));
        }
    }
}
