//! Arbitrary partition bytes through the record-batch decoder (CRC checks off so the fuzzer
//! reaches the records) and on to the Arrow columns: records or a typed error, never a panic,
//! and never more than the decompression limit per batch. The one-pass Arrow decode
//! (`decode_columns`) agrees with the slots decode: the same error, or the same columns.
//!
//! Input: byte 0 = flags (bit 0 read_committed, bits 1-2 the number of aborted transactions,
//! bits 4-7 start_offset); then two bytes per aborted transaction (producer id, first offset);
//! the rest is the records section of a partition.
#![no_main]
use _native::records::{
    decode_columns, decode_records, to_columns, ColumnsError, DecodeOptions, RecordsError,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let aborted_len = 2 * usize::from((flags >> 1) & 3);
    if rest.len() < aborted_len {
        return;
    }
    let (aborted, input) = rest.split_at(aborted_len);
    let opts = DecodeOptions {
        check_crcs: false,
        read_committed: flags & 1 != 0,
        aborted_transactions: aborted
            .chunks(2)
            .map(|p| (i64::from(p[0]), i64::from(p[1])))
            .collect(),
        start_offset: i64::from(flags >> 4),
        max_decompressed_batch: 1 << 20,
    };
    let one_pass = decode_columns(input, &opts, "fuzz", 0);
    let decoded = match decode_records(input, &opts) {
        Ok(decoded) => decoded,
        Err(err) => {
            let other = one_pass.expect_err("the one-pass decode accepted what the slots refused");
            let other = match other {
                ColumnsError::Records(records) => same_error(&records),
                arrow => arrow.to_string(),
            };
            assert_eq!(other, same_error(&err));
            return;
        }
    };
    let n = decoded.len();
    assert_eq!(decoded.offsets.len(), n);
    assert_eq!(decoded.timestamps.len(), n);
    assert_eq!(decoded.values.len(), n);
    assert_eq!(decoded.header_starts.len(), n + 1);
    assert!(decoded.offsets.iter().all(|&o| o >= opts.start_offset));
    for buffer in &decoded.owned {
        assert!(buffer.len() <= opts.max_decompressed_batch);
    }
    for slot in decoded.keys.iter().chain(&decoded.values).flatten() {
        let _ = decoded.bytes(input, *slot);
    }
    for i in 0..n {
        for h in &decoded.headers[decoded.header_range(i)] {
            let _ = decoded.bytes(input, h.key);
        }
    }
    let batch = to_columns(&decoded, input, "fuzz", 0).expect("columns of decoded records");
    assert_eq!(batch.num_rows(), n);
    let (direct, summary) = one_pass.expect("the one-pass decode refused what the slots accepted");
    assert_eq!(direct, batch);
    assert_eq!(summary, decoded.summary);
});

/// An error as both decoders must agree on it. A codec's own reason for a corrupt frame is left
/// out: zstd names the first inconsistency it meets, which depends on how much output room it
/// was given, and the two decoders reuse their buffers differently.
fn same_error(err: &RecordsError) -> String {
    match err {
        RecordsError::Decompression {
            base_offset, codec, ..
        } => format!("batch at offset {base_offset}: {codec} decompression failed"),
        other => other.to_string(),
    }
}
