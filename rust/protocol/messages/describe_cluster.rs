//! DescribeCluster (key 60): the cluster id, the controller and every broker with its rack,
//! answered by any broker.
//!
//! Versions 0-1: flexible from 0; 1 adds the endpoint type (brokers or controllers).

use super::Api;
use crate::kafka_struct;

pub struct DescribeCluster;

impl Api for DescribeCluster {
    const NAME: &'static str = "DescribeCluster";
    const KEY: i16 = 60;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DescribeClusterRequest;
    type Response = DescribeClusterResponse;
}

kafka_struct! {
    /// `endpoint_type`: 1 brokers, 2 controllers (v1).
    pub struct DescribeClusterRequest {
        include_cluster_authorized_operations: bool [0, _],
        endpoint_type: i8 [1, _] = 1,
    }
}

kafka_struct! {
    pub struct DescribeClusterBroker {
        broker_id: i32 [0, _],
        host: String [0, _],
        port: i32 [0, _],
        rack: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeClusterResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        endpoint_type: i8 [1, _] = 1,
        cluster_id: String [0, _],
        controller_id: i32 [0, _] = -1,
        brokers: Vec<DescribeClusterBroker> [0, _],
        cluster_authorized_operations: i32 [0, _] = i32::MIN,
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, rack: Option<String>, controller: i32) -> DescribeClusterResponse {
        DescribeClusterResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            endpoint_type: if v >= 1 { 2 } else { 1 },
            cluster_id: "c".into(),
            controller_id: controller,
            brokers: vec![DescribeClusterBroker {
                broker_id: 1,
                host: "h".into(),
                port: 9092,
                rack,
            }],
            cluster_authorized_operations: i32::MIN,
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=1,
            ops: bool,
            rack in proptest::option::of("[a-z0-9]{0,8}"),
            controller: i32,
        ) {
            let request = DescribeClusterRequest {
                include_cluster_authorized_operations: ops,
                endpoint_type: if v >= 1 { 2 } else { 1 },
            };
            assert_round_trip::<DescribeCluster>(v, &request, &response(v, rack, controller));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<DescribeCluster>(v, &response(v, Some("r".into()), 1));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DescribeClusterRequest {
            include_cluster_authorized_operations: true,
            endpoint_type: 1,
        };
        let frame = encode_request::<DescribeCluster>(1, 0, None, &request).unwrap();
        // header: key, version, correlation id, null client id, tags; then the body.
        assert_eq!(
            &frame[4..],
            &[0, 60, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0, 1, 1, 0]
        );
    }
}
