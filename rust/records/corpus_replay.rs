//! Replays a corpus of fuzz inputs through the decoders the fuzz targets drive: the frame
//! decoder (fed whole, fed in chunks, and received into its windows), the record-batch decoder
//! and on to the Arrow columns (both ways), and each of the four decompressors. Every file goes
//! through every decoder, both as raw bytes and read the way its fuzz target reads its input.
//! Errors are expected; a panic fails the test.
//!
//! `#[ignore]`d: `tools/valgrind` runs it under memcheck, which sees every heap block the core
//! touches (the tests build without the `python` feature, so with the system allocator):
//!
//! ```text
//! FERROKAFKA_CORPUS=dir cargo test --lib corpus_replay -- --ignored --nocapture
//! ```
//!
//! `dir` holds input files, directly or one level of subdirectories down (`fuzz/seeds`, a
//! corpus grown by `FUZZ_CORPUS_DIR=dir tools/fuzz`).

use std::path::{Path, PathBuf};

use crate::protocol::frame::FrameDecoder;
use crate::records::compression::decompress;
use crate::records::{decode_columns, decode_records, to_columns, Codec, DecodeOptions};

/// The fuzz targets' limits: a frame, and one batch decompressed.
const FRAME_LIMIT: usize = 1 << 20;
const DECOMPRESS_LIMIT: usize = 1 << 20;

/// The files of `root` and of its immediate subdirectories, in name order.
fn corpus_files(root: &Path) -> Vec<PathBuf> {
    let list = |dir: &Path| -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        paths.sort();
        paths
    };
    let mut files = Vec::new();
    for path in list(root) {
        if path.is_dir() {
            files.extend(list(&path).into_iter().filter(|p| p.is_file()));
        } else if path.is_file() {
            files.push(path);
        }
    }
    files
}

/// Split `stream` into frames: fed in chunks of the sizes given (in turn), or with
/// `direct_min` set, received into the decoder's window when it offers one. Stops at the first
/// error (a hostile size prefix), as a connection does.
fn split_frames(stream: &[u8], sizes: &[u8], direct_min: Option<usize>) -> usize {
    let mut decoder = match direct_min {
        Some(min) => FrameDecoder::with_direct_min(FRAME_LIMIT, min),
        None => FrameDecoder::new(FRAME_LIMIT),
    };
    let mut frames = 0;
    let mut fed = 0;
    let mut i = 0;
    while fed < stream.len() {
        let mut chunk = usize::from(sizes[i % sizes.len()])
            .max(1)
            .min(stream.len() - fed);
        i += 1;
        match decoder.receive_window() {
            Some((storage, range)) if direct_min.is_some() => {
                chunk = chunk.min(range.len());
                let dst = storage.window_ptr(range.start);
                // SAFETY: `chunk` bytes fit in the window, which nothing reads until the frame
                // is complete.
                unsafe { std::ptr::copy_nonoverlapping(stream[fed..].as_ptr(), dst, chunk) };
                decoder.window_filled(chunk);
            }
            _ => decoder.feed(&stream[fed..fed + chunk]),
        }
        fed += chunk;
        loop {
            match decoder.next_frame_owned() {
                Ok(Some((storage, range))) => {
                    assert!(range.len() <= FRAME_LIMIT);
                    // Read every byte of the frame: memcheck reports any it did not write.
                    let sum: u64 = storage[range].iter().map(|&b| u64::from(b)).sum();
                    std::hint::black_box(sum);
                    frames += 1;
                }
                Ok(None) => break,
                Err(_) => return frames,
            }
        }
    }
    frames
}

fn replay_frames(data: &[u8]) {
    split_frames(data, &[255], None);
    split_frames(data, &[1, 3, 7], Some(8));
    // As the frame_decoder target reads its input: byte 0 = n, then n % 8 + 1 chunk sizes.
    if let Some((&n, rest)) = data.split_first() {
        let n = usize::from(n % 8) + 1;
        if rest.len() >= n {
            let (sizes, stream) = rest.split_at(n);
            split_frames(stream, sizes, None);
            split_frames(stream, sizes, Some(usize::from(sizes[0]) * 4 + 1));
        }
    }
}

/// Decode `input` as a partition's records, into slots then columns, and in one pass.
fn decode_partition(input: &[u8], opts: &DecodeOptions) {
    let one_pass = decode_columns(input, opts, "replay", 0);
    match decode_records(input, opts) {
        Ok(decoded) => {
            for slot in decoded.keys.iter().chain(&decoded.values).flatten() {
                std::hint::black_box(decoded.bytes(input, *slot));
            }
            let batch = to_columns(&decoded, input, "replay", 0);
            std::hint::black_box(batch.map(|b| b.num_rows()).ok());
        }
        Err(err) => {
            std::hint::black_box(err.to_string());
        }
    }
    std::hint::black_box(one_pass.map(|(b, _)| b.num_rows()).ok());
}

fn replay_records(data: &[u8]) {
    for check_crcs in [true, false] {
        for read_committed in [false, true] {
            let opts = DecodeOptions {
                check_crcs,
                read_committed,
                max_decompressed_batch: DECOMPRESS_LIMIT,
                ..DecodeOptions::default()
            };
            decode_partition(data, &opts);
        }
    }
    // As the record_batch target reads its input: byte 0 = flags (bit 0 read_committed, bits
    // 1-2 the number of aborted transactions, bits 4-7 start_offset), then two bytes per
    // aborted transaction, then the records.
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
        max_decompressed_batch: DECOMPRESS_LIMIT,
    };
    decode_partition(input, &opts);
    decode_partition(input, &DecodeOptions::default());
}

fn replay_decompressors(data: &[u8]) {
    for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
        if let Ok(out) = decompress(codec, data, DECOMPRESS_LIMIT, 0) {
            assert!(
                out.len() <= DECOMPRESS_LIMIT,
                "{}: past the limit",
                codec.name()
            );
            // At the limit exactly, and one byte below it.
            std::hint::black_box(decompress(codec, data, out.len(), 0).ok());
            if let Some(below) = out.len().checked_sub(1) {
                std::hint::black_box(decompress(codec, data, below, 0).ok());
            }
        }
    }
}

#[test]
#[ignore = "replays the corpus named by FERROKAFKA_CORPUS; tools/valgrind runs it"]
fn corpus_replay() {
    let root = std::env::var_os("FERROKAFKA_CORPUS")
        .expect("FERROKAFKA_CORPUS names the corpus directory to replay");
    let files = corpus_files(Path::new(&root));
    assert!(
        !files.is_empty(),
        "no files in {}",
        Path::new(&root).display()
    );
    for path in &files {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        replay_frames(&data);
        replay_records(&data);
        replay_decompressors(&data);
    }
    println!(
        "corpus_replay: replayed {} files from {}",
        files.len(),
        Path::new(&root).display()
    );
}
