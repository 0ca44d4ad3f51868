//! Structures several APIs share. Their fields carry no version gates of their own: they only
//! appear inside fields (usually tagged) that the owning message gates.

use crate::kafka_struct;

kafka_struct! {
    /// A partition leader hint (KIP-951), in Fetch and Produce responses.
    pub struct LeaderIdAndEpoch {
        leader_id: i32 [0, _] = -1,
        leader_epoch: i32 [0, _] = -1,
    }
}

kafka_struct! {
    /// A broker address sent along with leader hints (KIP-951).
    pub struct NodeEndpoint {
        node_id: i32 [0, _],
        host: String [0, _],
        port: i32 [0, _],
        rack: Option<String> [0, _],
    }
}
