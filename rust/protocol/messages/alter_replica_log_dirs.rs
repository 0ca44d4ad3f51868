//! AlterReplicaLogDirs (key 34): move a broker's replicas to other log directories of the
//! same broker. Sent to the broker holding the replicas.
//!
//! Versions 1-2: v1 is Kafka 4.x's floor (v0 was removed); 2 flexible.

use super::Api;
use crate::kafka_struct;

pub struct AlterReplicaLogDirs;

impl Api for AlterReplicaLogDirs {
    const NAME: &'static str = "AlterReplicaLogDirs";
    const KEY: i16 = 34;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = AlterReplicaLogDirsRequest;
    type Response = AlterReplicaLogDirsResponse;
}

kafka_struct! {
    pub struct AlterReplicaLogDirTopic {
        name: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct AlterReplicaLogDir {
        path: String [0, _],
        topics: Vec<AlterReplicaLogDirTopic> [0, _],
    }
}

kafka_struct! {
    pub struct AlterReplicaLogDirsRequest {
        dirs: Vec<AlterReplicaLogDir> [0, _],
    }
}

kafka_struct! {
    pub struct AlterReplicaLogDirPartitionResult {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct AlterReplicaLogDirTopicResult {
        topic_name: String [0, _],
        partitions: Vec<AlterReplicaLogDirPartitionResult> [0, _],
    }
}

kafka_struct! {
    pub struct AlterReplicaLogDirsResponse {
        throttle_time_ms: i32 [0, _],
        results: Vec<AlterReplicaLogDirTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, partition: i32) -> AlterReplicaLogDirsResponse {
        AlterReplicaLogDirsResponse {
            throttle_time_ms: 0,
            results: vec![AlterReplicaLogDirTopicResult {
                topic_name: "t".into(),
                partitions: vec![AlterReplicaLogDirPartitionResult {
                    partition_index: partition,
                    error_code: code,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 1i16..=2, path in "/[a-z]{1,10}", partition: i32, code: i16) {
            let request = AlterReplicaLogDirsRequest {
                dirs: vec![AlterReplicaLogDir {
                    path,
                    topics: vec![AlterReplicaLogDirTopic {
                        name: "t".into(),
                        partitions: vec![partition],
                    }],
                }],
            };
            assert_round_trip::<AlterReplicaLogDirs>(v, &request, &response(code, partition));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=2 {
            assert_truncations_fail::<AlterReplicaLogDirs>(v, &response(57, 0));
        }
    }

    #[test]
    fn request_bytes() {
        let request = AlterReplicaLogDirsRequest {
            dirs: vec![AlterReplicaLogDir {
                path: "/d".into(),
                topics: vec![AlterReplicaLogDirTopic {
                    name: "t".into(),
                    partitions: vec![2],
                }],
            }],
        };
        let frame = encode_request::<AlterReplicaLogDirs>(2, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v2: &[u8] = &[
            0, 2, 3, b'/', b'd',        // header tags, dirs [ "/d"
            2, 2, b't', 2, 0, 0, 0, 2,  //   topics [ "t" partitions [ 2 ]
            0, 0, 0,                    //   topic, dir, body tags
        ];
        assert_eq!(&frame[14..], v2);
    }
}
