//! MurmurHash2 as Kafka's Java client computes it (`Utils.murmur2`): the default partitioner's
//! hash of a record key, so keyed records land where Java and librdkafka put them. And CRC-32C
//! (Castagnoli), the checksum of a v2 record batch.

/// The CRC-32C of `data` (a record batch's from its attributes to its end).
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    // CRC-32/ISCSI is CRC-32C; the 64-bit result holds the 32-bit CRC in its low half.
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, data) as u32
}

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

/// The partition the Java client's default partitioner gives a record with `key` in a topic
/// of `partitions` partitions (`toPositive(murmur2(key)) % partitions`); `partitions` > 0.
#[inline]
pub fn partition_for_key(key: &[u8], partitions: usize) -> usize {
    ((murmur2(key) & 0x7fff_ffff) as usize) % partitions
}

#[cfg(test)]
mod tests {
    use super::{crc32c, murmur2, partition_for_key};

    #[test]
    fn crc32c_check_values() {
        // The catalogue's check value of CRC-32/ISCSI, and RFC 3720's (iSCSI) test vectors.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
        let ascending: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&ascending), 0x46DD_794E);
        assert_eq!(crc32c(b""), 0);
    }

    proptest::proptest! {
        /// Every length and alignment (the SIMD path's head, body and tail) agrees with the
        /// crc32 instruction's result.
        #[test]
        fn crc32c_matches_the_reference(data in proptest::collection::vec(0u8.., 0..9000), skip in 0usize..64) {
            let data = &data[skip.min(data.len())..];
            proptest::prop_assert_eq!(crc32c(data), ::crc32c::crc32c(data));
        }
    }

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

    #[test]
    fn a_negative_hash_is_made_positive_before_the_modulo() {
        // murmur2("abcd") is -1_323_649_548; Java's toPositive (& 0x7fffffff) makes it 823_834_100.
        assert_eq!(partition_for_key(b"abcd", 7), 823_834_100 % 7);
        assert_eq!(partition_for_key(b"abc", 10), 479_470_107 % 10);
        assert_eq!(partition_for_key(b"abc", 1), 0);
    }
}
