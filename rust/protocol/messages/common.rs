//! Structures several APIs share. Their fields carry no version gates of their own: they only
//! appear inside fields (usually tagged) that the owning message gates.

use crate::kafka_struct;
use crate::protocol::codec::{Reader, Uuid, Version, Wire};
use crate::protocol::error::Result;

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

kafka_struct! {
    /// One part of a client quota entity (DescribeClientQuotas, AlterClientQuotas): a user, a
    /// client id or an IP; a null name is the type's default entity.
    pub struct QuotaEntityPart {
        entity_type: String [0, _],
        entity_name: Option<String> [0, _],
    }
}

kafka_struct! {
    /// Partitions of one topic, by id, in the heartbeat-driven group protocols (KIP-848's
    /// consumer groups, KIP-932's share groups).
    pub struct GroupTopicPartitions {
        topic_id: Uuid [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    /// A member's assignment in a heartbeat response (null when it did not change).
    pub struct GroupAssignment {
        topic_partitions: Vec<GroupTopicPartitions> [0, _],
    }
}

/// A nullable struct: an int8 marker (-1 null, 1 present) before the struct itself.
impl Wire for Option<GroupAssignment> {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        if r.i8()? < 0 {
            return Ok(None);
        }
        GroupAssignment::read(r, v).map(Some)
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        match self {
            None => w.push(0xff),
            Some(a) => {
                w.push(1);
                a.write(w, v);
            }
        }
    }
}

kafka_struct! {
    /// Share-group acknowledgements (KIP-932) of offsets `first_offset..=last_offset`: one
    /// type for all of them, or one per offset (0 gap, 1 accept, 2 release, 3 reject, 4 renew).
    pub struct AcknowledgementBatch {
        first_offset: i64 [0, _],
        last_offset: i64 [0, _],
        acknowledge_types: Vec<i8> [0, _],
    }
}

// A described group member's assignment (ConsumerGroupDescribe, ShareGroupDescribe): topics by
// id and by name.
kafka_struct! {
    pub struct TopicPartitions {
        topic_id: Uuid [0, _],
        topic_name: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct Assignment {
        topic_partitions: Vec<TopicPartitions> [0, _],
    }
}
