//! The two outputs of the decoder agree: slots (`decode_records`) and Arrow columns straight
//! from the batches (`decode_columns`) give the same records, the same summary, and the
//! same error (variant, batch, record index and message) on every input.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use proptest::prelude::*;

use super::tests::{decoded, CODECS};
use super::*;

/// offset, timestamp (us), timestamp type, key, value, headers.
type Row = (
    i64,
    i64,
    i32,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

fn slot_rows(input: &[u8], d: &DecodedRecords) -> Vec<Row> {
    decoded(input, d)
        .into_iter()
        .zip(&d.timestamp_types)
        .map(|((offset, ts, key, value, headers), &ts_type)| {
            (
                offset,
                ts.saturating_mul(1000),
                i32::from(ts_type),
                key,
                value,
                headers,
            )
        })
        .collect()
}

/// The rows of a columns batch, read back through arrow's own accessors; also checks
/// the topic and partition columns.
fn arrow_rows(rb: &RecordBatch, topic: &str, partition: i32) -> Vec<Row> {
    assert_eq!(rb.schema(), columns_schema());
    let keys = rb.column(0).as_binary::<i32>();
    let values = rb.column(1).as_binary::<i32>();
    let topics = rb.column(2).as_string::<i32>();
    let partitions = rb.column(3).as_primitive::<Int32Type>();
    let offsets = rb.column(4).as_primitive::<Int64Type>();
    let timestamps = rb.column(5).as_primitive::<TimestampMicrosecondType>();
    let types = rb.column(6).as_primitive::<Int32Type>();
    let headers = rb.column(7).as_list::<i32>();
    for c in rb.columns() {
        c.to_data().validate_full().expect("valid Arrow data");
    }
    let bin = |a: &arrow_array::BinaryArray, i: usize| a.is_valid(i).then(|| a.value(i).to_vec());
    (0..rb.num_rows())
        .map(|i| {
            assert_eq!(topics.value(i), topic);
            assert_eq!(partitions.value(i), partition);
            // A record without headers has a null list (as Spark's source), never an empty one.
            assert_eq!(headers.is_valid(i), headers.value_length(i) > 0);
            let list = headers.value(i);
            let h = list.as_struct();
            let hk = h.column(0).as_string::<i32>();
            let hv = h.column(1).as_binary::<i32>();
            let hs = (0..h.len())
                .map(|j| (hk.value(j).to_string(), bin(hv, j)))
                .collect();
            (
                offsets.value(i),
                timestamps.value(i),
                types.value(i),
                bin(keys, i),
                bin(values, i),
                hs,
            )
        })
        .collect()
}

/// Decode through both sinks and check they agree; returns the slots' outcome.
fn both(input: &[u8], opts: &DecodeOptions) -> std::result::Result<DecodedRecords, RecordsError> {
    let slots = decode_records(input, opts);
    let arrow = decode_columns(input, opts, "topic-a", 3);
    match (&slots, arrow) {
        (Ok(d), Ok((rb, summary))) => {
            assert_eq!(summary, d.summary);
            assert_eq!(arrow_rows(&rb, "topic-a", 3), slot_rows(input, d));
            let two_pass = to_columns(d, input, "topic-a", 3).unwrap();
            assert_eq!(rb, two_pass);
        }
        (Err(e), Err(ColumnsError::Records(a))) => {
            assert_eq!(e, &a);
            assert_eq!(e.to_string(), a.to_string());
        }
        (s, a) => panic!("the sinks disagree: slots {s:?}, arrow {a:?}"),
    }
    slots
}

fn rec(
    ts: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
) -> Record {
    Record {
        timestamp: ts,
        key: key.map(<[u8]>::to_vec),
        value: value.map(<[u8]>::to_vec),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec)))
            .collect(),
    }
}

fn mixed() -> Vec<Record> {
    vec![
        rec(1_000, Some(b"k0"), Some(b"v0"), &[]),
        rec(1_001, None, Some(b""), &[]),
        rec(990, Some(b""), None, &[("a", Some(b"1")), ("b", None)]),
        rec(1_500, None, None, &[("", Some(b""))]),
        rec(2_000, Some(&[0xff; 300]), Some(&[7; 5000]), &[]),
        rec(
            2_001,
            Some(b"k5"),
            Some(b"v5"),
            &[("trace-id", Some(&[0xfe; 40]))],
        ),
    ]
}

fn batch(records: &[Record], base_offset: i64, codec: Codec) -> Vec<u8> {
    build_batch(
        records,
        &BatchOptions {
            base_offset,
            codec,
            ..Default::default()
        },
    )
    .unwrap()
}

fn no_crc() -> DecodeOptions {
    DecodeOptions {
        check_crcs: false,
        ..Default::default()
    }
}

/// Recompute a whole batch's CRC after editing it.
fn fix_crc(batch: &mut [u8]) {
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn every_codec_nulls_empties_and_headers() {
    for codec in CODECS {
        let mut input = batch(&mixed(), 10, codec);
        input.extend(batch(&mixed()[..2], 16, codec));
        input.extend(batch(&[], 18, codec));
        let d = both(&input, &DecodeOptions::default()).unwrap();
        assert_eq!(d.len(), 8, "{codec:?}");
        assert_eq!(d.summary.next_offset, Some(19));
        assert_eq!(d.summary.batches, 3);
    }
}

#[test]
fn compressed_batches_of_changing_sizes() {
    // The Arrow sink decompresses every batch into the previous one's buffer.
    let sized = |n: usize| -> Vec<Record> {
        (0..n)
            .map(|i| {
                let v = vec![(i % 251) as u8; i % 700];
                rec(i as i64, Some(b"key"), Some(&v), &[])
            })
            .collect()
    };
    for codec in CODECS {
        let mut input = Vec::new();
        let mut base = 0;
        for n in [1, 50, 3, 200, 0, 7] {
            input.extend(batch(&sized(n), base, codec));
            base += n.max(1) as i64;
        }
        let d = both(&input, &DecodeOptions::default()).unwrap();
        assert_eq!(d.len(), 261, "{codec:?}");
    }
}

#[test]
fn no_headers_at_all_and_headers_only_late() {
    // The Arrow sink makes the headers' list offsets only once a header arrives.
    let plain: Vec<Record> = (0..5)
        .map(|i| rec(i, Some(b"k"), Some(b"v"), &[]))
        .collect();
    let d = both(&batch(&plain, 0, Codec::None), &DecodeOptions::default()).unwrap();
    assert_eq!(d.headers.len(), 0);
    let mut late = plain.clone();
    late.push(rec(9, None, None, &[("h", None), ("i", Some(b"x"))]));
    late.push(rec(10, None, None, &[]));
    let d = both(&batch(&late, 0, Codec::None), &DecodeOptions::default()).unwrap();
    assert_eq!(d.headers.len(), 2);
    // And with the header-carrying record skipped (below the start offset).
    let opts = DecodeOptions {
        start_offset: 6,
        ..Default::default()
    };
    let d = both(&batch(&late, 0, Codec::None), &opts).unwrap();
    assert_eq!(
        (d.len(), d.headers.len(), d.summary.skipped_below_start),
        (1, 0, 6)
    );
}

#[test]
fn log_append_time_and_timestamps() {
    let input = build_batch(
        &mixed(),
        &BatchOptions {
            log_append_time: true,
            codec: Codec::Lz4,
            ..Default::default()
        },
    )
    .unwrap();
    let d = both(&input, &DecodeOptions::default()).unwrap();
    assert!(d.timestamp_types.iter().all(|&t| t == 1));
}

#[test]
fn start_offset_in_the_middle_of_a_batch() {
    for codec in CODECS {
        let mut input = batch(&mixed(), 100, codec);
        input.extend(batch(&mixed(), 106, codec));
        for start in [0, 100, 103, 105, 106, 109, 112, 500] {
            let opts = DecodeOptions {
                start_offset: start,
                ..Default::default()
            };
            let d = both(&input, &opts).unwrap();
            assert_eq!(
                d.len() as u64 + d.summary.skipped_below_start,
                12,
                "{codec:?} {start}"
            );
            assert_eq!(d.summary.next_offset, Some(112));
        }
    }
}

#[test]
fn control_batches_and_aborted_transactions() {
    let txn = |base: i64, pid: i64, n: usize, codec: Codec| {
        build_batch(
            &mixed()[..n],
            &BatchOptions {
                base_offset: base,
                transactional: true,
                producer_id: pid,
                producer_epoch: 0,
                codec,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let marker = |base: i64, pid: i64, kind: i16| {
        build_control_batch(
            kind,
            0,
            &BatchOptions {
                base_offset: base,
                producer_id: pid,
                producer_epoch: 0,
                ..Default::default()
            },
        )
        .unwrap()
    };
    for codec in CODECS {
        let mut input = txn(0, 7, 3, codec);
        input.extend(marker(3, 7, 1));
        input.extend(txn(4, 8, 2, codec));
        input.extend(marker(6, 8, 0));
        input.extend(txn(7, 7, 2, codec));
        input.extend(marker(9, 7, 1));
        input.extend(batch(&mixed()[..1], 10, codec));
        for read_committed in [false, true] {
            let opts = DecodeOptions {
                read_committed,
                aborted_transactions: vec![(8, 4)],
                ..Default::default()
            };
            let d = both(&input, &opts).unwrap();
            let expected: Vec<i64> = if read_committed {
                vec![0, 1, 2, 7, 8, 10]
            } else {
                vec![0, 1, 2, 4, 5, 7, 8, 10]
            };
            assert_eq!(d.offsets, expected, "{codec:?}");
            assert_eq!(d.summary.skipped_control, 3);
            assert_eq!(
                d.summary.skipped_aborted,
                if read_committed { 2 } else { 0 }
            );
            assert_eq!(d.summary.next_offset, Some(11));
        }
    }
}

#[test]
fn truncated_trailing_batch() {
    for codec in CODECS {
        let mut input = batch(&mixed(), 0, codec);
        let whole = input.len();
        let second = batch(&mixed(), 6, codec);
        input.extend(&second);
        for cut in [1, 7, 12, 60, 61, 62, second.len() - 1] {
            let d = both(&input[..whole + cut], &DecodeOptions::default()).unwrap();
            assert!(d.summary.truncated, "{codec:?} {cut}");
            assert_eq!((d.len(), d.summary.next_offset), (6, Some(6)));
        }
    }
}

#[test]
fn crc_mismatch() {
    for codec in CODECS {
        let mut input = batch(&mixed(), 0, codec);
        let second_at = input.len();
        input.extend(batch(&mixed(), 6, codec));
        let last = input.len() - 3;
        input[last] ^= 0x10;
        let err = both(&input, &DecodeOptions::default()).unwrap_err();
        assert!(
            matches!(err, RecordsError::CrcMismatch { base_offset: 6, position, .. } if position == second_at),
            "{err}"
        );
        // Without CRC checks: whatever the flipped byte does, both sinks do the same.
        let _ = both(&input, &no_crc());
    }
}

#[test]
fn corrupt_records_are_the_same_error() {
    let good = batch(&mixed()[..2], 40, Codec::None);
    // Byte 61 is the first record's length, 62 its attributes, 63 and 64 its deltas, 65 its
    // key's length.
    let cases: Vec<(usize, u8, usize, &str)> = vec![
        (61, 0x7e, 0, "record of 63 bytes overruns its batch"),
        (61, 0x01, 0, "record length -1 is negative"),
        (61, 0x00, 0, "attributes: "),
        (61, 0xff, 0, "record length -64 is negative"),
        (65, 0x03, 0, "key length -2 is negative"),
        (65, 0x7e, 0, "key of 63 bytes overruns the record"),
    ];
    for (at, byte, index, what) in cases {
        let mut bad = good.clone();
        bad[at] = byte;
        for fixed in [false, true] {
            if fixed {
                fix_crc(&mut bad);
            }
            let opts = if fixed {
                DecodeOptions::default()
            } else {
                no_crc()
            };
            let err = both(&bad, &opts).unwrap_err();
            match &err {
                RecordsError::CorruptRecord {
                    base_offset: 40,
                    index: i,
                    what: w,
                } => {
                    assert_eq!(*i, index, "{err}");
                    assert!(w.starts_with(what), "{w:?} should start with {what:?}");
                }
                other => panic!("byte {at} = {byte:#x}: {other}"),
            }
            if !fixed {
                // With CRC checks on, the edit is a CRC mismatch first.
                assert!(matches!(
                    both(&bad, &DecodeOptions::default()).unwrap_err(),
                    RecordsError::CrcMismatch { .. }
                ));
            }
        }
    }
}

/// The records section of a hand-made batch of raw record bytes (uncompressed).
fn raw_batch(records: &[&[u8]], count: i32) -> Vec<u8> {
    let mut b = batch(&[], 5, Codec::None);
    for r in records {
        b.extend_from_slice(r);
    }
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    b[57..61].copy_from_slice(&count.to_be_bytes());
    fix_crc(&mut b);
    b
}

#[test]
fn hand_made_record_errors() {
    let cases: Vec<(Vec<&[u8]>, i32, &str)> = vec![
        // length 7: attrs, ts 0, delta 0, key null, value null, 1 header with a null key.
        (
            vec![&[14, 0, 0, 0, 1, 1, 2, 1]],
            1,
            "header 0 has a null key",
        ),
        // A header key that is not UTF-8.
        (
            vec![&[18, 0, 0, 0, 1, 1, 2, 2, 0xff, 1]],
            1,
            "header 0 key is not UTF-8",
        ),
        // Two bytes left over inside the record.
        (
            vec![&[16, 0, 0, 0, 1, 1, 0, 9, 9]],
            1,
            "2 bytes left over inside the record",
        ),
        // More headers than bytes.
        (
            vec![&[12, 0, 0, 0, 1, 1, 20]],
            1,
            "10 headers cannot fit in 0 bytes",
        ),
        // A varint longer than 5 bytes (offset delta).
        (
            vec![&[22, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 1, 0]],
            1,
            "offset delta: varint",
        ),
        // A varint that does not fit 32 bits (5 bytes, high bits set): the record length.
        (
            vec![&[0xff, 0xff, 0xff, 0xff, 0x7f]],
            1,
            "record length: varint",
        ),
        // A varlong of 10 bytes is read (bits past 64 dropped), 11 is too long.
        (
            vec![&[
                30, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 1, 1, 0,
            ]],
            1,
            "",
        ),
        (
            vec![&[
                32, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 1, 1, 0,
            ]],
            1,
            "timestamp delta: varint",
        ),
        // A record cut by the end of the data (the length varint itself).
        (vec![&[0x80]], 1, "record length: "),
        // Good record then a bad one: index 1.
        (
            vec![&[12, 0, 0, 0, 1, 1, 0], &[12, 0, 0, 0, 1, 1, 4]],
            2,
            "2 headers cannot fit",
        ),
    ];
    for (records, count, what) in cases {
        let input = raw_batch(&records, count);
        let result = both(&input, &DecodeOptions::default());
        if what.is_empty() {
            assert_eq!(result.unwrap().len(), 1);
            continue;
        }
        match result.unwrap_err() {
            RecordsError::CorruptRecord {
                base_offset: 5,
                index,
                what: w,
            } => {
                assert_eq!(index, records.len() - 1, "{w}");
                assert!(w.starts_with(what), "{w:?} should start with {what:?}");
            }
            other => panic!("{records:?}: {other}"),
        }
    }
}

#[test]
fn hostile_counts_and_trailing_bytes() {
    let good = batch(&mixed(), 0, Codec::None);
    for count in [i32::MAX, -1, 1_000_000] {
        let mut bad = good.clone();
        bad[57..61].copy_from_slice(&count.to_be_bytes());
        assert!(matches!(
            both(&bad, &no_crc()).unwrap_err(),
            RecordsError::HostileRecordCount { .. }
        ));
    }
    // Fewer records than present: the rest are trailing bytes.
    let mut bad = good.clone();
    bad[57..61].copy_from_slice(&4i32.to_be_bytes());
    assert!(matches!(
        both(&bad, &no_crc()).unwrap_err(),
        RecordsError::TrailingBytes { .. }
    ));
    // More records than present: the fifth record runs out of bytes.
    let mut bad = good.clone();
    bad[57..61].copy_from_slice(&7i32.to_be_bytes());
    assert!(matches!(
        both(&bad, &no_crc()).unwrap_err(),
        RecordsError::CorruptRecord { index: 6, .. }
    ));
    // A compressed batch's count is checked against its decompressed bytes.
    let mut bad = batch(&mixed(), 0, Codec::Zstd);
    bad[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    assert!(matches!(
        both(&bad, &no_crc()).unwrap_err(),
        RecordsError::HostileRecordCount { .. }
    ));
}

#[test]
fn batch_level_errors() {
    let good = batch(&mixed(), 0, Codec::None);
    let mut legacy = good.clone();
    legacy[16] = 1;
    assert!(matches!(
        both(&legacy, &no_crc()).unwrap_err(),
        RecordsError::LegacyMagic { .. }
    ));
    let mut short = good.clone();
    short[8..12].copy_from_slice(&10i32.to_be_bytes());
    assert!(matches!(
        both(&short, &no_crc()).unwrap_err(),
        RecordsError::BatchTooShort { .. }
    ));
    let mut codec = good.clone();
    codec[22] |= 7;
    assert!(matches!(
        both(&codec, &no_crc()).unwrap_err(),
        RecordsError::UnknownCodec { codec: 7, .. }
    ));
    let mut garbage = batch(&mixed(), 0, Codec::Lz4);
    let n = garbage.len();
    garbage[n - 20..].fill(0xaa);
    assert!(matches!(
        both(&garbage, &no_crc()).unwrap_err(),
        RecordsError::Decompression { .. }
    ));
    let big = batch(&mixed(), 0, Codec::Zstd);
    let opts = DecodeOptions {
        max_decompressed_batch: 1000,
        ..Default::default()
    };
    assert!(matches!(
        both(&big, &opts).unwrap_err(),
        RecordsError::DecompressedTooLarge { .. }
    ));
    // Records before an error in a later batch are not returned by either.
    let mut two = good.clone();
    two.extend(&legacy);
    assert!(both(&two, &no_crc()).is_err());
}

#[test]
fn empty_input() {
    let d = both(&[], &DecodeOptions::default()).unwrap();
    assert!(d.is_empty() && d.summary.next_offset.is_none() && !d.summary.truncated);
    let (rb, _) = decode_columns(&[], &DecodeOptions::default(), "t", 0).unwrap();
    assert_eq!((rb.num_rows(), rb.num_columns()), (0, 8));
}

fn record_strategy() -> impl Strategy<Value = Record> {
    (
        -5i64..2_000_000_000_000,
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
        proptest::collection::vec(
            (
                "[a-z\u{e9}]{0,8}",
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..10)),
            ),
            0..3,
        ),
    )
        .prop_map(|(timestamp, key, value, headers)| Record {
            timestamp,
            key,
            value,
            headers,
        })
}

proptest! {
    #[test]
    fn random_batches_decode_identically(
        batches in proptest::collection::vec(
            (proptest::collection::vec(record_strategy(), 0..20), 0usize..5, any::<bool>()),
            1..5,
        ),
        start in 0i64..60,
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut input = Vec::new();
        let mut base = 0i64;
        for (records, codec, log_append_time) in &batches {
            let opts = BatchOptions {
                base_offset: base,
                codec: CODECS[*codec],
                log_append_time: *log_append_time,
                ..Default::default()
            };
            input.extend(build_batch(records, &opts).unwrap());
            base += records.len().max(1) as i64;
        }
        let input = match cut {
            Some(i) => &input[..i.index(input.len() + 1)],
            None => &input[..],
        };
        let opts = DecodeOptions { start_offset: start, ..Default::default() };
        let d = both(input, &opts).unwrap();
        prop_assert!(d.offsets.iter().all(|&o| o >= start));
    }

    #[test]
    fn mutated_batches_fail_identically(
        records in proptest::collection::vec(record_strategy(), 1..10),
        codec in 0usize..5,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        check_crcs: bool,
        read_committed: bool,
    ) {
        let mut bad = batch(&records, 3, CODECS[codec]);
        for (i, b) in flips {
            let i = i.index(bad.len());
            bad[i] = b;
        }
        let opts = DecodeOptions {
            check_crcs,
            read_committed,
            aborted_transactions: vec![(-1, 0), (0, 3)],
            ..Default::default()
        };
        let _ = both(&bad, &opts);
    }

    #[test]
    fn arbitrary_records_sections_fail_identically(
        data in proptest::collection::vec(any::<u8>(), 0..64),
        count in 0i32..4,
    ) {
        let _ = both(&raw_batch(&[&data], count), &DecodeOptions::default());
    }
}
