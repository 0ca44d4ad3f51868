//! WriteTxnMarkers (key 27): write commit or abort markers of a producer's transaction into
//! partitions. Brokers send it to partition leaders when a transaction ends; the admin client
//! sends an abort marker to end a transaction its coordinator lost track of (a hanging
//! transaction). Needs ClusterAction on the cluster.
//!
//! Version 1 only (flexible): Kafka 4.x removed v0, which 3.9 still took; 1 is what both
//! speak.

use super::Api;
use crate::kafka_struct;

pub struct WriteTxnMarkers;

impl Api for WriteTxnMarkers {
    const NAME: &'static str = "WriteTxnMarkers";
    const KEY: i16 = 27;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 1;
    type Request = WriteTxnMarkersRequest;
    type Response = WriteTxnMarkersResponse;
}

kafka_struct! {
    pub struct WritableTxnMarkerTopic {
        name: String [0, _],
        partition_indexes: Vec<i32> [0, _],
    }
}

kafka_struct! {
    /// `transaction_result`: true commits, false aborts.
    pub struct WritableTxnMarker {
        producer_id: i64 [0, _],
        producer_epoch: i16 [0, _],
        transaction_result: bool [0, _],
        topics: Vec<WritableTxnMarkerTopic> [0, _],
        coordinator_epoch: i32 [0, _],
    }
}

kafka_struct! {
    pub struct WriteTxnMarkersRequest {
        markers: Vec<WritableTxnMarker> [0, _],
    }
}

kafka_struct! {
    pub struct WritableTxnMarkerPartitionResult {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct WritableTxnMarkerTopicResult {
        name: String [0, _],
        partitions: Vec<WritableTxnMarkerPartitionResult> [0, _],
    }
}

kafka_struct! {
    pub struct WritableTxnMarkerResult {
        producer_id: i64 [0, _],
        topics: Vec<WritableTxnMarkerTopicResult> [0, _],
    }
}

kafka_struct! {
    pub struct WriteTxnMarkersResponse {
        markers: Vec<WritableTxnMarkerResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(producer: i64, code: i16) -> WriteTxnMarkersResponse {
        WriteTxnMarkersResponse {
            markers: vec![WritableTxnMarkerResult {
                producer_id: producer,
                topics: vec![WritableTxnMarkerTopicResult {
                    name: "t".into(),
                    partitions: vec![WritableTxnMarkerPartitionResult {
                        partition_index: 0,
                        error_code: code,
                    }],
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(producer: i64, epoch: i16, commit: bool, coordinator_epoch: i32, code: i16) {
            let request = WriteTxnMarkersRequest {
                markers: vec![WritableTxnMarker {
                    producer_id: producer,
                    producer_epoch: epoch,
                    transaction_result: commit,
                    topics: vec![WritableTxnMarkerTopic { name: "t".into(), partition_indexes: vec![0] }],
                    coordinator_epoch,
                }],
            };
            assert_round_trip::<WriteTxnMarkers>(1, &request, &response(producer, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<WriteTxnMarkers>(1, &response(9, 47));
    }

    #[test]
    fn request_bytes() {
        let request = WriteTxnMarkersRequest {
            markers: vec![WritableTxnMarker {
                producer_id: 1,
                producer_epoch: 2,
                transaction_result: false,
                topics: vec![WritableTxnMarkerTopic {
                    name: "t".into(),
                    partition_indexes: vec![0],
                }],
                coordinator_epoch: 3,
            }],
        };
        let frame = encode_request::<WriteTxnMarkers>(1, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0, 2,                       // header tags, markers [
            0, 0, 0, 0, 0, 0, 0, 1,     //   producer id 1
            0, 2, 0,                    //   epoch 2, abort
            2, 2, b't', 2, 0, 0, 0, 0,  //   topics [ "t" [ 0 ]
            0,                          //   topic tags
            0, 0, 0, 3, 0, 0,           //   coordinator epoch 3, marker tags, body tags
        ];
        assert_eq!(&frame[14..], v1);
    }
}
