//! How many bytes a record takes in a v2 record batch, uncompressed: the one place this
//! arithmetic lives. The open batch asks for exact sizes (`RecordsWriter`); the producer's
//! other paths (records from Python, Arrow rows) ask for an upper bound before they know the
//! record's timestamp and offset deltas.

use super::batch::BATCH_HEADER_LEN;

/// The largest attributes byte, timestamp-delta varlong and offset-delta varint a record can
/// have.
pub const RECORD_FIXED_MAX: usize = 1 + 10 + 5;

/// Bytes of `v` as a zigzag varint (Kafka's varints and varlongs are both zigzag-encoded, and
/// an i32's zigzag encoding is as long as the same value's as an i64).
#[inline]
pub fn varint_len(v: i64) -> usize {
    let z = ((v << 1) ^ (v >> 63)) as u64;
    (64 - (z | 1).leading_zeros() as usize).div_ceil(7)
}

/// A length-prefixed bytes field of `len` bytes (None: null, the length -1 alone).
#[inline]
pub fn field_len(len: Option<usize>) -> usize {
    len.map_or(1, |n| varint_len(n as i64) + n)
}

/// A record with its own length prefix, from the length of everything after the prefix.
#[inline]
pub fn with_prefix(body: usize) -> usize {
    varint_len(body as i64) + body
}

/// Everything after a record's length prefix: attributes, deltas, key, value and headers
/// (each header's key and value length; a header key is never null).
pub fn body_len(
    timestamp_delta: i64,
    offset_delta: i64,
    key: Option<usize>,
    value: Option<usize>,
    headers: impl ExactSizeIterator<Item = (usize, Option<usize>)>,
) -> usize {
    let mut body = 1
        + varint_len(timestamp_delta)
        + varint_len(offset_delta)
        + field_len(key)
        + field_len(value)
        + varint_len(headers.len() as i64);
    for (k, v) in headers {
        body += field_len(Some(k)) + field_len(v);
    }
    body
}

/// An upper bound of a record's size (length prefix included) whatever its deltas.
pub fn record_bound(
    key: Option<usize>,
    value: Option<usize>,
    headers: impl ExactSizeIterator<Item = (usize, Option<usize>)>,
) -> usize {
    let deltas_bound = RECORD_FIXED_MAX - 1 - varint_len(0) * 2;
    with_prefix(body_len(0, 0, key, value, headers) + deltas_bound)
}

/// Whether a record whose size is at most `record_bound` (see [`record_bound`]) can be sent under
/// `max_request_size`: alone in a batch, header included. The producer refuses a record for which
/// this is false (`MessageSizeTooLargeError`), and the open batches' shortcut takes only records
/// for which it is true, leaving the others to that refusal.
#[inline]
pub fn fits_request(record_bound: usize, max_request_size: usize) -> bool {
    record_bound + BATCH_HEADER_LEN <= max_request_size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths_at_the_boundaries() {
        for (v, n) in [
            (0i64, 1usize),
            (-1, 1),
            (63, 1),
            (64, 2),
            (-64, 1),
            (-65, 2),
            (8191, 2),
            (8192, 3),
            (i64::from(i32::MAX), 5),
            (i64::from(i32::MIN), 5),
            (i64::MAX, 10),
            (i64::MIN, 10),
        ] {
            assert_eq!(varint_len(v), n, "{v}");
        }
    }

    #[test]
    fn a_record_fits_a_request_with_its_batch_header() {
        let bound = record_bound(None, Some(1000), std::iter::empty());
        assert!(fits_request(bound, bound + BATCH_HEADER_LEN));
        assert!(!fits_request(bound, bound + BATCH_HEADER_LEN - 1));
        assert!(!fits_request(0, BATCH_HEADER_LEN - 1));
    }

    #[test]
    fn the_bound_is_never_below_an_exact_size() {
        let headers = [(3usize, Some(70usize)), (1, None)];
        for (ts, off) in [(0i64, 0i64), (i64::MAX, i64::from(i32::MAX)), (-1, 1000)] {
            for (k, v) in [
                (None, Some(100usize)),
                (Some(10), None),
                (Some(9000), Some(0)),
            ] {
                let exact = with_prefix(body_len(ts, off, k, v, headers.iter().copied()));
                assert!(
                    record_bound(k, v, headers.iter().copied()) >= exact,
                    "{ts} {off} {k:?} {v:?}"
                );
            }
        }
        // With the largest deltas the bound is the exact size.
        let none = std::iter::empty();
        let exact = with_prefix(body_len(i64::MIN, i64::from(i32::MIN), Some(5), None, none));
        assert_eq!(record_bound(Some(5), None, std::iter::empty()), exact);
    }
}
