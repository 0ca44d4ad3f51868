//! DescribeLogDirs (key 35): a broker's log directories, each with the replicas it holds (size,
//! lag behind the leader, whether it is a future replica being moved in) and, from v4, its
//! total and usable bytes. Sent to each broker asked about.
//!
//! Versions 1-4: v1 is Kafka 4.x's floor (v0 was removed); 2 flexible; 3 a top-level error
//! code; 4 total and usable bytes.

use super::Api;
use crate::kafka_struct;

pub struct DescribeLogDirs;

impl Api for DescribeLogDirs {
    const NAME: &'static str = "DescribeLogDirs";
    const KEY: i16 = 35;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 4;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = DescribeLogDirsRequest;
    type Response = DescribeLogDirsResponse;
}

kafka_struct! {
    pub struct DescribableLogDirTopic {
        topic: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    /// `topics: None` asks for every replica of the broker.
    pub struct DescribeLogDirsRequest {
        topics: Option<Vec<DescribableLogDirTopic>> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeLogDirsPartition {
        partition_index: i32 [0, _],
        partition_size: i64 [0, _],
        offset_lag: i64 [0, _],
        is_future_key: bool [0, _],
    }
}

kafka_struct! {
    pub struct DescribeLogDirsTopic {
        name: String [0, _],
        partitions: Vec<DescribeLogDirsPartition> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeLogDirsResult {
        error_code: i16 [0, _],
        log_dir: String [0, _],
        topics: Vec<DescribeLogDirsTopic> [0, _],
        total_bytes: i64 [4, _] = -1,
        usable_bytes: i64 [4, _] = -1,
    }
}

kafka_struct! {
    pub struct DescribeLogDirsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [3, _],
        results: Vec<DescribeLogDirsResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, size: i64, lag: i64, future: bool) -> DescribeLogDirsResponse {
        DescribeLogDirsResponse {
            throttle_time_ms: 0,
            error_code: if v >= 3 { 57 } else { 0 },
            results: vec![DescribeLogDirsResult {
                error_code: 0,
                log_dir: "/data".into(),
                topics: vec![DescribeLogDirsTopic {
                    name: "t".into(),
                    partitions: vec![DescribeLogDirsPartition {
                        partition_index: 1,
                        partition_size: size,
                        offset_lag: lag,
                        is_future_key: future,
                    }],
                }],
                total_bytes: if v >= 4 { 1 << 40 } else { -1 },
                usable_bytes: if v >= 4 { 1 << 30 } else { -1 },
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=4,
            every: bool,
            partitions in proptest::collection::vec(any::<i32>(), 0..4),
            size: i64,
            lag: i64,
            future: bool,
        ) {
            let request = DescribeLogDirsRequest {
                topics: if every {
                    None
                } else {
                    Some(vec![DescribableLogDirTopic { topic: "t".into(), partitions }])
                },
            };
            assert_round_trip::<DescribeLogDirs>(v, &request, &response(v, size, lag, future));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=4 {
            assert_truncations_fail::<DescribeLogDirs>(v, &response(v, 10, 0, true));
        }
    }

    #[test]
    fn request_bytes() {
        let every = DescribeLogDirsRequest { topics: None };
        let frame = encode_request::<DescribeLogDirs>(1, 0, None, &every).unwrap();
        assert_eq!(&frame[14..], &[0xff, 0xff, 0xff, 0xff]); // null array
        let frame = encode_request::<DescribeLogDirs>(2, 0, None, &every).unwrap();
        assert_eq!(&frame[15..], &[0, 0]); // compact null array, tags
    }
}
