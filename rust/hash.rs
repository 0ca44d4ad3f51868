//! MurmurHash2 as Kafka's Java client computes it (`Utils.murmur2`): the default partitioner's
//! hash of a record key, so keyed records land where Java and librdkafka put them.

const SEED: u32 = 0x9747_b28c;
const M: u32 = 0x5bd1_e995;

/// The 32-bit MurmurHash2 of `data`, as the signed int the Java client returns.
pub fn murmur2(data: &[u8]) -> i32 {
    let mut h = SEED ^ (data.len() as u32);
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        let mut k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]).wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        if rest.len() == 3 {
            h ^= u32::from(rest[2]) << 16;
        }
        if rest.len() >= 2 {
            h ^= u32::from(rest[1]) << 8;
        }
        h ^= u32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

#[cfg(test)]
mod tests {
    use super::murmur2;

    #[test]
    fn matches_the_java_client() {
        // Utils.murmur2 of kafka-clients for these keys.
        assert_eq!(murmur2(b""), 275_646_681);
        assert_eq!(murmur2(b"abc"), 479_470_107);
        assert_eq!(murmur2(b"abcd"), -1_323_649_548);
        assert_eq!(murmur2(b"a-little-bit-long-string"), -985_981_536);
        assert_eq!(
            murmur2(&[0xFF, 0x00, 0x80, 0x7F, 0x01, 0xFE, 0x02]),
            -1_218_544_377
        );
    }
}
