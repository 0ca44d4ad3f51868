//! Record-batch properties: round trips for every codec, and every kind of bad input is a typed
//! error (or a clean stop for a truncated tail), never a panic.

use proptest::prelude::*;

use super::*;

pub(super) const CODECS: [Codec; 5] = Codec::ALL;

/// offset, timestamp (ms), key, value, headers.
pub(super) type Decoded = (
    i64,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

pub(super) fn decoded(input: &[u8], d: &DecodedRecords) -> Vec<Decoded> {
    (0..d.len())
        .map(|i| {
            let b = |s: Option<Slot>| s.map(|s| d.bytes(input, s).to_vec());
            let headers = d.headers[d.header_range(i)]
                .iter()
                .map(|h| {
                    let key = String::from_utf8(d.bytes(input, h.key).to_vec()).unwrap();
                    (key, b(h.value))
                })
                .collect();
            (
                d.offsets[i],
                d.timestamps[i],
                b(d.keys[i]),
                b(d.values[i]),
                headers,
            )
        })
        .collect()
}

fn record_strategy() -> impl Strategy<Value = Record> {
    (
        0i64..2_000_000_000_000,
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
        proptest::collection::vec(
            (
                "[a-z]{0,8}",
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
    fn encode_decode_is_identity(
        batches in proptest::collection::vec(proptest::collection::vec(record_strategy(), 0..20), 1..4),
        check_crcs: bool,
    ) {
        for codec in CODECS {
            let mut input = Vec::new();
            let mut expected = Vec::new();
            let mut base = 100i64;
            for records in &batches {
                let opts = BatchOptions { base_offset: base, codec, ..Default::default() };
                input.extend(build_batch(records, &opts).unwrap());
                for (i, r) in records.iter().enumerate() {
                    expected.push((base + i as i64, r.timestamp, r.key.clone(), r.value.clone(), r.headers.clone()));
                }
                base += records.len().max(1) as i64;
            }
            let opts = DecodeOptions { check_crcs, ..Default::default() };
            let d = decode_records(&input, &opts).unwrap();
            prop_assert_eq!(decoded(&input, &d), expected);
            prop_assert_eq!(d.summary.next_offset, Some(base));
            prop_assert!(!d.summary.truncated);
            prop_assert_eq!(d.checksums.len(), d.len());
        }
    }

    #[test]
    fn writer_encodes_as_build_batch(
        records in proptest::collection::vec(record_strategy(), 0..20),
        codec in proptest::sample::select(CODECS.to_vec()),
    ) {
        let opts = BatchOptions { codec, producer_id: 7, producer_epoch: 1, base_sequence: 3, ..Default::default() };
        let mut writer = RecordsWriter::new();
        for r in &records {
            let headers: Vec<(&[u8], Option<&[u8]>)> =
                r.headers.iter().map(|(k, v)| (k.as_bytes(), v.as_deref())).collect();
            let before = writer.size();
            let size = writer.record_size(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers);
            writer.append(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers).unwrap();
            prop_assert_eq!(writer.size(), before + size);
        }
        prop_assert_eq!(writer.count() as usize, records.len());
        prop_assert_eq!(writer.finish(&opts).unwrap(), build_batch(&records, &opts).unwrap());
    }

    #[test]
    fn a_batch_takes_its_first_record_whatever_its_size_then_fills_to_batch_size(
        values in proptest::collection::vec(0usize..300, 1..30),
        batch_size in 0usize..2000,
    ) {
        let mut writer = RecordsWriter::new();
        for (i, len) in values.iter().enumerate() {
            let value = vec![7u8; *len];
            let size = writer.record_size(1000 + i as i64, None, Some(&value), &[]);
            let room = writer.has_room(size, batch_size);
            prop_assert_eq!(room, i == 0 || writer.size() + size <= batch_size);
            if !room {
                break;
            }
            writer.append(1000 + i as i64, None, Some(&value), &[]).unwrap();
            prop_assert!(writer.count() == 1 || writer.size() <= batch_size);
        }
    }

    #[test]
    fn taken_batches_decode_alike(
        batches in proptest::collection::vec(
            (proptest::collection::vec(record_strategy(), 0..12), 0usize..5), 1..6),
    ) {
        // Batches of mixed codecs: uncompressed ones stay slots into the input, decompressed
        // ones reach the hook (each while its buffer is the one being reused).
        let mut input = Vec::new();
        let mut base = 0i64;
        for (records, codec_i) in &batches {
            let opts = BatchOptions { base_offset: base, codec: CODECS[*codec_i], ..Default::default() };
            input.extend(build_batch(records, &opts).unwrap());
            base += records.len().max(1) as i64;
        }
        let opts = DecodeOptions::default();
        let expected = decoded(&input, &decode_records(&input, &opts).unwrap());
        let mut taken: Vec<Option<Decoded>> = Vec::new();
        let mut take = |d: &DecodedRecords, rows: std::ops::Range<usize>, data: &[u8]| {
            let b = |s: Slot| data[s.range()].to_vec();
            taken.resize(rows.start, None);
            for i in rows {
                let headers = d.headers[d.header_range(i)]
                    .iter()
                    .map(|h| (String::from_utf8(b(h.key)).unwrap(), h.value.map(b)))
                    .collect();
                taken.push(Some((d.offsets[i], d.timestamps[i], d.keys[i].map(b), d.values[i].map(b), headers)));
            }
        };
        let d = decode_records_taking(&input, &opts, &mut take).unwrap();
        prop_assert!(d.owned.is_empty());
        let mut got = Vec::new();
        for i in 0..d.len() {
            let was_taken = taken.get(i).is_some_and(Option::is_some);
            let slots = d.keys[i].iter().chain(d.values[i].iter())
                .chain(d.headers[d.header_range(i)].iter().flat_map(|h| std::iter::once(&h.key).chain(h.value.iter())));
            for s in slots {
                prop_assert_eq!(s.buffer == Slot::TAKEN, was_taken);
            }
            if was_taken {
                got.push(taken[i].clone().unwrap());
            } else {
                let b = |s: Option<Slot>| s.map(|s| d.bytes(&input, s).to_vec());
                let headers = d.headers[d.header_range(i)]
                    .iter()
                    .map(|h| (String::from_utf8(d.bytes(&input, h.key).to_vec()).unwrap(), b(h.value)))
                    .collect();
                got.push((d.offsets[i], d.timestamps[i], b(d.keys[i]), b(d.values[i]), headers));
            }
        }
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn mutations_and_truncations_never_panic(
        records in proptest::collection::vec(record_strategy(), 1..10),
        codec_i in 0usize..5,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        check_crcs: bool,
    ) {
        let batch = build_batch(&records, &BatchOptions { codec: CODECS[codec_i], ..Default::default() }).unwrap();
        let mut bad = batch.clone();
        for (i, b) in flips {
            let i = i.index(bad.len());
            bad[i] = b;
        }
        let bad = &bad[..cut.index(bad.len() + 1)];
        let _ = decode_records(bad, &DecodeOptions { check_crcs, ..Default::default() });
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..400), check_crcs: bool) {
        let _ = decode_records(&data, &DecodeOptions { check_crcs, ..Default::default() });
        let _ = records_end(&data);
        let _ = batch_last_offsets(&data);
        let _ = batch_position(&data, 7);
    }
}

fn simple(n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| Record {
            timestamp: 1_000 + i as i64,
            key: Some(format!("k{i}").into_bytes()),
            value: Some(vec![b'v'; 10]),
            headers: vec![],
        })
        .collect()
}

#[test]
fn hand_built_golden_batch_decodes() {
    #[rustfmt::skip]
    let batch: Vec<u8> = vec![
        0, 0, 0, 0, 0, 0, 0, 5,         // baseOffset 5
        0, 0, 0, 58,                    // batchLength: 49 header bytes + 9 record bytes
        0xff, 0xff, 0xff, 0xff,         // partitionLeaderEpoch -1
        2,                              // magic
        0, 0, 0, 0,                     // crc (not checked below)
        0, 0,                           // attributes: uncompressed, create time
        0, 0, 0, 0,                     // lastOffsetDelta 0
        0, 0, 0, 0, 0, 0, 0, 100,       // baseTimestamp 100
        0, 0, 0, 0, 0, 0, 0, 100,       // maxTimestamp 100
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // producerId -1
        0xff, 0xff,                     // producerEpoch -1
        0xff, 0xff, 0xff, 0xff,         // baseSequence -1
        0, 0, 0, 1,                     // recordsCount 1
        16,                             // record length 8 (zig-zag)
        0,                              // attributes
        0,                              // timestampDelta 0
        0,                              // offsetDelta 0
        1,                              // key length -1 (null)
        4, b'h', b'i',                  // value "hi"
        0,                              // no headers
    ];
    let opts = DecodeOptions {
        check_crcs: false,
        ..Default::default()
    };
    let d = decode_records(&batch, &opts).unwrap();
    assert_eq!(
        decoded(&batch, &d),
        vec![(5, 100, None, Some(b"hi".to_vec()), vec![])]
    );
    assert_eq!(d.summary.next_offset, Some(6));
    // Uncompressed values are slots into the input: no copy.
    assert_eq!(d.values[0].unwrap().buffer, Slot::INPUT);
    // With CRC checks on, the zero CRC is caught.
    let err = decode_records(&batch, &DecodeOptions::default()).unwrap_err();
    assert!(matches!(
        err,
        RecordsError::CrcMismatch {
            base_offset: 5,
            position: 0,
            ..
        }
    ));
}

#[test]
fn crc_mismatch_names_the_batch() {
    let mut a = build_batch(&simple(3), &BatchOptions::default()).unwrap();
    let b = build_batch(
        &simple(3),
        &BatchOptions {
            base_offset: 3,
            ..Default::default()
        },
    )
    .unwrap();
    let last = b.len() - 2; // inside the last value (the final byte is its header count)
    let mut b = b;
    b[last] ^= 1;
    let pos = a.len();
    a.extend(b);
    let err = decode_records(&a, &DecodeOptions::default()).unwrap_err();
    assert!(
        matches!(err, RecordsError::CrcMismatch { base_offset: 3, position, .. } if position == pos),
        "{err}"
    );
    assert!(err.to_string().contains("batch at offset 3"));
    // Without CRC checks the flipped byte (inside a value) decodes.
    assert_eq!(
        decode_records(
            &a,
            &DecodeOptions {
                check_crcs: false,
                ..Default::default()
            }
        )
        .unwrap()
        .len(),
        6
    );
}

#[test]
fn truncated_trailing_batch_stops_cleanly() {
    let mut input = build_batch(&simple(4), &BatchOptions::default()).unwrap();
    let second = build_batch(
        &simple(4),
        &BatchOptions {
            base_offset: 4,
            ..Default::default()
        },
    )
    .unwrap();
    input.extend_from_slice(&second[..second.len() - 7]);
    let d = decode_records(&input, &DecodeOptions::default()).unwrap();
    assert_eq!(d.len(), 4);
    assert!(d.summary.truncated);
    assert_eq!(d.summary.next_offset, Some(4));
    assert_eq!(d.summary.last_leader_epoch, Some(-1));
    // The header scan agrees with the decoder, and sees nothing in a lone partial batch.
    assert_eq!(records_end(&input), Some((4, -1)));
    assert_eq!(records_end(&second[..second.len() - 1]), None);
    assert_eq!(records_end(&second), Some((8, -1)));
    assert_eq!(records_end(&[]), None);
    assert_eq!(batch_last_offsets(&input), vec![3]);
    let mut both = input[..input.len() - (second.len() - 7)].to_vec();
    both.extend_from_slice(&second);
    assert_eq!(batch_last_offsets(&both), vec![3, 7]);
    assert_eq!(batch_last_offsets(&[]), Vec::<i64>::new());
    assert_eq!(batch_position(&input, 0), Some(0));
    assert_eq!(
        batch_position(&input, 4),
        Some(input.len() - (second.len() - 7))
    );
    assert_eq!(batch_position(&input, 5), None);
}

#[test]
fn records_below_start_offset_are_skipped() {
    let input = build_batch(
        &simple(10),
        &BatchOptions {
            base_offset: 20,
            ..Default::default()
        },
    )
    .unwrap();
    let d = decode_records(
        &input,
        &DecodeOptions {
            start_offset: 25,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(d.offsets, (25..30).collect::<Vec<_>>());
    assert_eq!(d.summary.skipped_below_start, 5);
    assert_eq!(d.summary.next_offset, Some(30));
}

#[test]
fn legacy_and_unknown_magic_are_rejected() {
    let mut input = build_batch(&simple(1), &BatchOptions::default()).unwrap();
    input[16] = 1;
    let err = decode_records(&input, &DecodeOptions::default()).unwrap_err();
    assert!(matches!(err, RecordsError::LegacyMagic { magic: 1, .. }));
    assert!(err.to_string().contains("legacy message set"));
    input[16] = 7;
    assert!(matches!(
        decode_records(&input, &DecodeOptions::default()).unwrap_err(),
        RecordsError::UnknownMagic { magic: 7, .. }
    ));
}

#[test]
fn hostile_lengths_are_typed_errors() {
    // batchLength below the header size.
    let mut input = build_batch(&simple(1), &BatchOptions::default()).unwrap();
    input[8..12].copy_from_slice(&10i32.to_be_bytes());
    assert!(matches!(
        decode_records(&input, &DecodeOptions::default()).unwrap_err(),
        RecordsError::BatchTooShort { length: 10, .. }
    ));
    // recordsCount far beyond the bytes present (CRC off so the count is reached).
    let mut input = build_batch(&simple(1), &BatchOptions::default()).unwrap();
    input[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    let opts = DecodeOptions {
        check_crcs: false,
        ..Default::default()
    };
    assert!(matches!(
        decode_records(&input, &opts).unwrap_err(),
        RecordsError::HostileRecordCount { .. }
    ));
    // A record length that overruns its batch.
    let mut input = build_batch(&simple(1), &BatchOptions::default()).unwrap();
    input[61] = 0x7e; // zig-zag 63
    let err = decode_records(&input, &opts).unwrap_err();
    assert!(
        matches!(err, RecordsError::CorruptRecord { index: 0, .. }),
        "{err}"
    );
}

#[test]
fn decompression_is_bounded_per_batch() {
    let big = vec![Record {
        timestamp: 1,
        key: None,
        value: Some(vec![0; 1 << 20]),
        headers: vec![],
    }];
    let input = build_batch(
        &big,
        &BatchOptions {
            codec: Codec::Zstd,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(input.len() < 10_000);
    let opts = DecodeOptions {
        max_decompressed_batch: 64 << 10,
        ..Default::default()
    };
    assert!(matches!(
        decode_records(&input, &opts).unwrap_err(),
        RecordsError::DecompressedTooLarge { .. }
    ));
}

fn txn(base: i64, pid: i64, n: usize) -> Vec<u8> {
    build_batch(
        &simple(n),
        &BatchOptions {
            base_offset: base,
            transactional: true,
            producer_id: pid,
            producer_epoch: 0,
            ..Default::default()
        },
    )
    .unwrap()
}

fn marker(base: i64, pid: i64, kind: i16) -> Vec<u8> {
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
}

#[test]
fn control_records_are_never_returned() {
    let mut input = txn(0, 7, 3);
    input.extend(marker(3, 7, 1));
    input.extend(
        build_batch(
            &simple(2),
            &BatchOptions {
                base_offset: 4,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    for read_committed in [false, true] {
        let d = decode_records(
            &input,
            &DecodeOptions {
                read_committed,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(d.offsets, vec![0, 1, 2, 4, 5]);
        assert_eq!(d.summary.skipped_control, 1);
        assert_eq!(d.summary.next_offset, Some(6));
    }
}

#[test]
fn read_committed_drops_aborted_transactions() {
    // Producer 7 commits offsets 0-2 (marker at 3); producer 8 aborts 4-5 (marker at 6);
    // producer 7 writes 7-8 and commits (marker 9).
    let mut input = txn(0, 7, 3);
    input.extend(marker(3, 7, 1));
    input.extend(txn(4, 8, 2));
    input.extend(marker(6, 8, 0));
    input.extend(txn(7, 7, 2));
    input.extend(marker(9, 7, 1));
    let aborted = vec![(8, 4)];
    let committed = decode_records(
        &input,
        &DecodeOptions {
            read_committed: true,
            aborted_transactions: aborted.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(committed.offsets, vec![0, 1, 2, 7, 8]);
    assert_eq!(committed.summary.skipped_aborted, 2);
    assert_eq!(committed.summary.next_offset, Some(10));
    let uncommitted = decode_records(
        &input,
        &DecodeOptions {
            read_committed: false,
            aborted_transactions: aborted,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(uncommitted.offsets, vec![0, 1, 2, 4, 5, 7, 8]);
}

#[test]
fn log_append_time_uses_max_timestamp() {
    let input = build_batch(
        &simple(3),
        &BatchOptions {
            log_append_time: true,
            ..Default::default()
        },
    )
    .unwrap();
    let d = decode_records(&input, &DecodeOptions::default()).unwrap();
    assert_eq!(d.timestamps, vec![1002, 1002, 1002]);
    assert_eq!(d.timestamp_types, vec![1, 1, 1]);
}

#[test]
fn empty_batches_and_null_header_values() {
    let mut input = build_batch(
        &[],
        &BatchOptions {
            base_offset: 9,
            ..Default::default()
        },
    )
    .unwrap();
    let rec = Record {
        timestamp: 5,
        key: None,
        value: None,
        headers: vec![("a".into(), None), ("b".into(), Some(vec![]))],
    };
    input.extend(
        build_batch(
            std::slice::from_ref(&rec),
            &BatchOptions {
                base_offset: 10,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    let d = decode_records(&input, &DecodeOptions::default()).unwrap();
    assert_eq!(decoded(&input, &d), vec![(10, 5, None, None, rec.headers)]);
    assert_eq!(d.summary.batches, 2);
}

#[test]
fn a_slot_past_4_gib_does_not_wrap() {
    // A decompressed batch may be allowed to exceed 4 GiB (max_decompressed_batch): a slot's
    // end is summed in usize.
    let slot = Slot {
        buffer: 0,
        start: u32::MAX - 1,
        len: 4,
    };
    assert_eq!(
        slot.range(),
        (u32::MAX as usize - 1)..(u32::MAX as usize + 3)
    );
}

#[test]
fn timestamps_whose_delta_wraps_decode_to_what_was_encoded() {
    // The delta from the first record's timestamp wraps (i64::MAX - -2): encoders and
    // decoders both wrap, as Kafka's Java client does.
    let records = [-2, i64::MAX].map(|timestamp| Record {
        timestamp,
        value: Some(b"v".to_vec()),
        ..Default::default()
    });
    let batch = build_batch(&records, &BatchOptions::default()).unwrap();
    let decoded = decode_records(&batch, &DecodeOptions::default()).unwrap();
    assert_eq!(decoded.timestamps, vec![-2, i64::MAX]);
}
