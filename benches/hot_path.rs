//! The Rust hot path on one core (everything here is single-threaded), measured with criterion:
//!
//! * `limits`: CRC-32C over 1 MiB and 64 KiB, and memcpy of 1 MiB, the machine's limit;
//! * `raw_codec`: the codec crates' own decompression of the records sections of the batches
//!   below (flate2 gzip, snap raw, our xerial snappy through `compression::decompress`,
//!   lz4_flex frame, zstd), i.e. the floor under decoding a compressed fetch;
//! * `decode`: `decode_records` (check_crcs on) of a fetch-sized input: batches of 500 records
//!   with increasing base offsets, concatenated as a broker returns them, ~1 MiB uncompressed;
//! * `columns`: the one-pass decode into the Arrow record batch (`decode_columns`, in Spark's
//!   Kafka schema) that Python's `decode_columns` hands out.
//!
//! Values are JSON-like text of 100 B or 1 KiB, keys 10 B. Throughput is the on-wire
//! (compressed) input for `decode` and the uncompressed output for `raw_codec`. When criterion is
//! done a Markdown table is printed from its own estimates (mean ns per iteration); GB/s there is
//! 10^9 bytes/s, where criterion's own lines say GiB/s.
//!
//!     cargo bench --bench hot_path
//!
//! Results go to `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else `criterion/` in the
//! target directory holding this binary; the table reads only estimates written by this run.

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use _native::records::compression::decompress;
use _native::records::{
    build_batch, decode_columns, decode_records, BatchOptions, Codec, DecodeOptions, Record,
};
use criterion::{Criterion, Throughput};

const MIB: usize = 1 << 20;
const FETCH_PLAIN_BYTES: usize = MIB;
const RECORDS_PER_BATCH: usize = 500;
const BATCH_HEADER_LEN: usize = 61;
const VALUE_SIZES: [usize; 2] = [100, 1024];
const CODECS: [Codec; 5] = Codec::ALL;
const CRC_TARGET_GBPS: f64 = 10.0;
const DECODE_PLAIN_TARGET_GBPS: f64 = 1.5;

/// The raw decompressors measured, each on the records sections of one fetch.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RawCodec {
    Gzip,
    Snap,
    SnappyXerial,
    Lz4Frame,
    Zstd,
}

impl RawCodec {
    const ALL: [RawCodec; 5] = [
        RawCodec::Gzip,
        RawCodec::Snap,
        RawCodec::SnappyXerial,
        RawCodec::Lz4Frame,
        RawCodec::Zstd,
    ];

    fn name(self) -> &'static str {
        match self {
            RawCodec::Gzip => "gzip (flate2/zlib-rs)",
            RawCodec::Snap => "snappy raw (snap)",
            RawCodec::SnappyXerial => "snappy xerial (our decompress)",
            RawCodec::Lz4Frame => "lz4 frame (lz4_flex)",
            RawCodec::Zstd => "zstd (zstd bulk)",
        }
    }

    fn key(self) -> &'static str {
        match self {
            RawCodec::Gzip => "gzip",
            RawCodec::Snap => "snap-raw",
            RawCodec::SnappyXerial => "snappy-xerial",
            RawCodec::Lz4Frame => "lz4-frame",
            RawCodec::Zstd => "zstd",
        }
    }

    /// The batch codec whose compressed sections this decompressor reads.
    fn codec(self) -> Codec {
        match self {
            RawCodec::Gzip => Codec::Gzip,
            RawCodec::Snap | RawCodec::SnappyXerial => Codec::Snappy,
            RawCodec::Lz4Frame => Codec::Lz4,
            RawCodec::Zstd => Codec::Zstd,
        }
    }
}

/// One partition's fetch in one codec.
struct Fetch {
    codec: Codec,
    value_size: usize,
    /// The concatenated batches as the broker sends them.
    wire: Vec<u8>,
    /// The same batches uncompressed.
    plain_len: usize,
    records: usize,
    /// Each batch's records section as stored (compressed by `codec`).
    sections: Vec<Vec<u8>>,
    /// Each batch's records section as one raw snappy block (for `RawCodec::Snap`).
    snap_raw: Vec<Vec<u8>>,
    /// Each batch's uncompressed records section length.
    section_plain: Vec<usize>,
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A JSON-like event of exactly `size` bytes: field names repeat, numbers and ids vary.
fn value(rng: &mut Rng, size: usize) -> Vec<u8> {
    const EVENTS: [&str; 6] = [
        "click",
        "view",
        "purchase",
        "login",
        "scroll",
        "add_to_cart",
    ];
    let mut s = String::with_capacity(size + 160);
    while s.len() < size {
        s.push_str(&format!(
            "{{\"user_id\":{},\"session\":\"{:08x}\",\"event\":\"{}\",\"amount\":{}.{:02},\"ts\":{}}}",
            rng.below(1_000_000),
            rng.next() as u32,
            EVENTS[rng.below(EVENTS.len() as u64) as usize],
            rng.below(10_000),
            rng.below(100),
            1_700_000_000_000 + rng.below(86_400_000),
        ));
    }
    s.truncate(size);
    s.into_bytes()
}

/// The same records for every codec: 500 per batch until ~1 MiB uncompressed.
fn batches(value_size: usize) -> Vec<Vec<Record>> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ value_size as u64);
    let per_record = value_size + 10 + 10; // value, key, record framing
    let total = FETCH_PLAIN_BYTES.div_ceil(per_record);
    let mut out = Vec::new();
    let mut offset = 0;
    while offset < total {
        let n = RECORDS_PER_BATCH.min(total - offset);
        out.push(
            (offset..offset + n)
                .map(|i| Record {
                    timestamp: 1_700_000_000_000 + i as i64,
                    key: Some(format!("key-{i:06}").into_bytes()),
                    value: Some(value(&mut rng, value_size)),
                    headers: vec![],
                })
                .collect(),
        );
        offset += n;
    }
    out
}

fn build_fetch(codec: Codec, value_size: usize, batches: &[Vec<Record>]) -> Fetch {
    let mut f = Fetch {
        codec,
        value_size,
        wire: Vec::new(),
        plain_len: 0,
        records: 0,
        sections: Vec::new(),
        snap_raw: Vec::new(),
        section_plain: Vec::new(),
    };
    for batch in batches {
        let opts = |codec| BatchOptions {
            base_offset: f.records as i64,
            codec,
            ..Default::default()
        };
        let packed = build_batch(batch, &opts(codec)).expect("build batch");
        let plain = build_batch(batch, &opts(Codec::None)).expect("build batch");
        let plain_section = &plain[BATCH_HEADER_LEN..];
        f.sections.push(packed[BATCH_HEADER_LEN..].to_vec());
        f.snap_raw.push(
            snap::raw::Encoder::new()
                .compress_vec(plain_section)
                .expect("snappy"),
        );
        f.section_plain.push(plain_section.len());
        f.wire.extend_from_slice(&packed);
        f.plain_len += plain.len();
        f.records += batch.len();
    }
    f
}

/// Reused output buffers, so the raw codecs are timed without allocation (except our xerial
/// path, which allocates as decoding does).
struct RawState {
    out: Vec<u8>,
    zstd: zstd::bulk::Decompressor<'static>,
}

/// Decompress every section of `f` with `raw`; returns the bytes produced.
fn raw_decompress(raw: RawCodec, f: &Fetch, st: &mut RawState) -> usize {
    let mut total = 0;
    for (i, &plain) in f.section_plain.iter().enumerate() {
        let section = black_box(&f.sections[i][..]);
        st.out.clear();
        let n = match raw {
            RawCodec::Gzip => flate2::read::GzDecoder::new(section)
                .read_to_end(&mut st.out)
                .expect("gzip"),
            RawCodec::Snap => {
                st.out.resize(plain, 0);
                snap::raw::Decoder::new()
                    .decompress(black_box(&f.snap_raw[i]), &mut st.out)
                    .expect("snappy")
            }
            RawCodec::SnappyXerial => decompress(Codec::Snappy, section, 256 * MIB, 0)
                .expect("xerial")
                .len(),
            RawCodec::Lz4Frame => lz4_flex::frame::FrameDecoder::new(section)
                .read_to_end(&mut st.out)
                .expect("lz4"),
            RawCodec::Zstd => {
                st.out.resize(plain, 0);
                st.zstd
                    .decompress_to_buffer(section, &mut st.out[..])
                    .expect("zstd")
            }
        };
        black_box(&st.out);
        total += n;
    }
    total
}

fn id(name: &str, value_size: usize) -> String {
    format!("{name}-{value_size}B")
}

fn bench(c: &mut Criterion, fetches: &[Fetch]) {
    let src: Vec<u8> = {
        let mut rng = Rng(42);
        (0..MIB).map(|_| rng.next() as u8).collect()
    };
    let mut g = c.benchmark_group("limits");
    for len in [MIB, 64 << 10] {
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(format!("crc32c-{}KiB", len >> 10), |b| {
            b.iter(|| _native::hash::crc32c(black_box(&src[..len])))
        });
    }
    g.throughput(Throughput::Bytes(MIB as u64));
    let mut dst = vec![0u8; MIB];
    g.bench_function("memcpy-1024KiB", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("raw_codec");
    let mut st = RawState {
        out: Vec::with_capacity(2 * MIB),
        zstd: zstd::bulk::Decompressor::new().expect("zstd context"),
    };
    for f in fetches {
        for raw in RawCodec::ALL.into_iter().filter(|r| r.codec() == f.codec) {
            let plain: usize = f.section_plain.iter().sum();
            assert_eq!(raw_decompress(raw, f, &mut st), plain, "{}", raw.name());
            g.throughput(Throughput::Bytes(plain as u64));
            g.bench_function(id(raw.key(), f.value_size), |b| {
                b.iter(|| raw_decompress(raw, f, &mut st))
            });
        }
    }
    g.finish();

    let opts = DecodeOptions::default();
    assert!(opts.check_crcs);
    let mut g = c.benchmark_group("decode");
    for f in fetches {
        let decoded = decode_records(&f.wire, &opts).expect("decode");
        assert_eq!(decoded.len(), f.records);
        g.throughput(Throughput::Bytes(f.wire.len() as u64));
        g.bench_function(id(f.codec.name(), f.value_size), |b| {
            b.iter(|| decode_records(black_box(&f.wire), &opts).expect("decode"))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("columns");
    for f in fetches {
        let (batch, _) = decode_columns(&f.wire, &opts, "bench", 0).expect("columns");
        assert_eq!(batch.num_rows(), f.records);
        g.throughput(Throughput::Bytes(f.wire.len() as u64));
        g.bench_function(id(f.codec.name(), f.value_size), |b| {
            b.iter(|| decode_columns(black_box(&f.wire), &opts, "bench", 0).expect("columns"))
        });
    }
    g.finish();
}

/// Where criterion writes: as criterion itself picks it, but without running `cargo metadata`.
fn criterion_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir).join("criterion");
    }
    // target/<profile>/deps/hot_path-<hash>
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("criterion")
}

/// Mean seconds per iteration from criterion's estimate, if this run wrote it.
fn mean_seconds(dir: &Path, group: &str, id: &str, since: SystemTime) -> Option<f64> {
    let path = dir.join(group).join(id).join("new").join("estimates.json");
    if std::fs::metadata(&path).ok()?.modified().ok()? < since {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v["mean"]["point_estimate"].as_f64().map(|ns| ns / 1e9)
}

fn fmt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn target(x: Option<f64>, min: f64) -> String {
    match x {
        Some(v) if v >= min => format!(">= {min} ✅"),
        Some(_) => format!(">= {min} ❌"),
        None => format!(">= {min}"),
    }
}

fn table(dir: &Path, since: SystemTime, fetches: &[Fetch]) {
    let gbs = |bytes: usize, s: f64| bytes as f64 / s / 1e9;
    let limit =
        |name: &str, bytes: usize| mean_seconds(dir, "limits", name, since).map(|s| gbs(bytes, s));
    let memcpy = limit("memcpy-1024KiB", MIB);

    println!("\n## Rust hot path, one core (criterion means; GB/s = 10^9 B/s)\n");
    println!(
        "input = bytes read (compressed for raw codecs and decode); uncompressed = bytes \
         produced/walked; % of limit = decode's uncompressed GB/s over memcpy (none) or the \
         raw codec (compressed)\n"
    );
    println!(
        "| group | measurement | input | GB/s input | GB/s uncompressed | M rec/s \
         | memcpy GB/s | raw codec GB/s | % of limit | target GB/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, len) in [("crc32c-1024KiB", MIB), ("crc32c-64KiB", 64 << 10)] {
        let v = limit(name, len);
        println!(
            "| limits | CRC-32C {} KiB | {} KiB | {} | {} | | | | | {} |",
            len >> 10,
            len >> 10,
            fmt(v, 2),
            fmt(v, 2),
            target(v, CRC_TARGET_GBPS)
        );
    }
    println!(
        "| limits | memcpy 1 MiB | 1024 KiB | {} | {} | | {} | | 100% | |",
        fmt(memcpy, 2),
        fmt(memcpy, 2),
        fmt(memcpy, 2)
    );

    // Raw codec GB/s (uncompressed) per decoder, then per fetch for the decode rows.
    let mut raw_own = Vec::new();
    for f in fetches {
        let plain: usize = f.section_plain.iter().sum();
        let compressed: usize = f.sections.iter().map(Vec::len).sum();
        let mut own: Option<f64> = None;
        for raw in RawCodec::ALL.into_iter().filter(|r| r.codec() == f.codec) {
            let s = mean_seconds(dir, "raw_codec", &id(raw.key(), f.value_size), since);
            let input = if raw == RawCodec::Snap {
                f.snap_raw.iter().map(Vec::len).sum()
            } else {
                compressed
            };
            let out = s.map(|s| gbs(plain, s));
            // The codec's own speed: snappy's is the raw block decoder's.
            if raw != RawCodec::SnappyXerial {
                own = out;
            }
            println!(
                "| raw codec | {} {} B values | {} KiB | {} | {} | {} | | {} | | |",
                raw.name(),
                f.value_size,
                input >> 10,
                fmt(s.map(|s| gbs(input, s)), 2),
                fmt(out, 2),
                fmt(s.map(|s| f.records as f64 / s / 1e6), 2),
                fmt(out, 2),
            );
        }
        raw_own.push(own);
    }
    for (group, (f, raw)) in ["decode", "columns"].into_iter().flat_map(|g| {
        fetches
            .iter()
            .zip(raw_own.iter().copied())
            .map(move |p| (g, p))
    }) {
        let s = mean_seconds(dir, group, &id(f.codec.name(), f.value_size), since);
        let plain = s.map(|s| gbs(f.plain_len, s));
        let limit = if f.codec == Codec::None { memcpy } else { raw };
        let pct = plain
            .zip(limit)
            .map(|(d, l)| format!("{:.0}%", 100.0 * d / l));
        println!(
            "| {} | {} {} B values, {} batches, {} records | {} KiB | {} | {} | {} | {} | {} | {} | {} |",
            if group == "decode" { "decode (slots)" } else { "decode to Arrow columns" },
            f.codec.name(),
            f.value_size,
            f.sections.len(),
            f.records,
            f.wire.len() >> 10,
            fmt(s.map(|s| gbs(f.wire.len(), s)), 2),
            fmt(plain, 2),
            fmt(s.map(|s| f.records as f64 / s / 1e6), 2),
            fmt(memcpy, 2),
            if f.codec == Codec::None {
                "-".into()
            } else {
                fmt(raw, 2)
            },
            pct.unwrap_or_else(|| "-".into()),
            if f.codec == Codec::None && group == "columns" {
                target(plain, DECODE_PLAIN_TARGET_GBPS)
            } else {
                String::new()
            },
        );
    }
}

fn main() {
    let started = SystemTime::now();
    let dir = criterion_dir();
    let fetches: Vec<Fetch> = VALUE_SIZES
        .iter()
        .flat_map(|&v| {
            let batches = batches(v);
            CODECS
                .iter()
                .map(|&c| build_fetch(c, v, &batches))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut c = Criterion::default()
        .output_directory(&dir)
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    bench(&mut c, &fetches);
    c.final_summary();

    // Criterion benchmarks only when given --bench (as `cargo bench` does) without --test.
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--bench") && !has("--test") && !has("--list") && !has("--profile-time") {
        table(&dir, started, &fetches);
    }
}
