//! The four codecs of record batches, decoding bounded by a caller-given limit (a size read off
//! the wire is never trusted for allocation) and encoding as the Java producer writes them.

use std::io::{Read, Write};

use super::error::{RecordsError, Result};

/// Codec ids in the low three bits of a batch's attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    None = 0,
    Gzip = 1,
    Snappy = 2,
    Lz4 = 3,
    Zstd = 4,
}

impl Codec {
    pub fn from_id(id: u8) -> Option<Codec> {
        Some(match id {
            0 => Codec::None,
            1 => Codec::Gzip,
            2 => Codec::Snappy,
            3 => Codec::Lz4,
            4 => Codec::Zstd,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Snappy => "snappy",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }

    pub fn from_name(name: &str) -> Option<Codec> {
        [
            Codec::None,
            Codec::Gzip,
            Codec::Snappy,
            Codec::Lz4,
            Codec::Zstd,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

/// The header of xerial-framed snappy (what the Java producer writes).
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER_LEN: usize = 16;

fn failed(base_offset: i64, codec: Codec, err: impl std::fmt::Display) -> RecordsError {
    RecordsError::Decompression {
        base_offset,
        codec: codec.name(),
        reason: err.to_string(),
    }
}

fn too_large(base_offset: i64, codec: Codec, limit: usize) -> RecordsError {
    RecordsError::DecompressedTooLarge {
        base_offset,
        codec: codec.name(),
        limit,
    }
}

/// Read a streaming decoder to its end into `out`, failing once it produces more than `limit`
/// bytes. `out`'s bytes are overwritten, not cleared first: a reused buffer is only
/// zero-filled where it has to grow.
fn read_bounded(
    mut reader: impl Read,
    hint: usize,
    limit: usize,
    base_offset: i64,
    codec: Codec,
    out: &mut Vec<u8>,
) -> Result<()> {
    // At most one byte past the limit is read: that byte says the limit is passed.
    let cap = limit.saturating_add(1);
    let mut filled = 0;
    loop {
        if filled == out.len() {
            // The room a reused buffer already has first, then growing geometrically.
            let target = if out.capacity() > out.len() {
                out.capacity()
            } else {
                out.len() + out.len().max(hint).max(32 << 10)
            };
            out.resize(target.min(cap), 0);
        }
        match reader.read(&mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if filled > limit {
                    return Err(too_large(base_offset, codec, limit));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(failed(base_offset, codec, e)),
        }
    }
    out.truncate(filled);
    Ok(())
}

/// Append one raw snappy block to `out[..*filled]` (bytes past `filled` are overwritten).
fn snappy_block(
    block: &[u8],
    out: &mut Vec<u8>,
    filled: &mut usize,
    limit: usize,
    base_offset: i64,
) -> Result<()> {
    let len =
        snap::raw::decompress_len(block).map_err(|e| failed(base_offset, Codec::Snappy, e))?;
    if filled.saturating_add(len) > limit {
        return Err(too_large(base_offset, Codec::Snappy, limit));
    }
    let start = *filled;
    if out.len() < start + len {
        out.resize(start + len, 0);
    }
    snap::raw::Decoder::new()
        .decompress(block, &mut out[start..start + len])
        .map_err(|e| failed(base_offset, Codec::Snappy, e))?;
    *filled = start + len;
    Ok(())
}

fn snappy_decode(data: &[u8], limit: usize, base_offset: i64, out: &mut Vec<u8>) -> Result<()> {
    let mut filled = 0;
    if data.len() >= XERIAL_HEADER_LEN && data[..8] == XERIAL_MAGIC {
        let mut rest = &data[XERIAL_HEADER_LEN..];
        while !rest.is_empty() {
            if rest.len() < 4 {
                return Err(failed(
                    base_offset,
                    Codec::Snappy,
                    "truncated xerial block length",
                ));
            }
            let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let block = rest.get(4..4 + len).ok_or_else(|| {
                failed(base_offset, Codec::Snappy, "xerial block overruns its data")
            })?;
            snappy_block(block, out, &mut filled, limit, base_offset)?;
            rest = &rest[4 + len..];
        }
    } else {
        snappy_block(data, out, &mut filled, limit, base_offset)?;
    }
    out.truncate(filled);
    Ok(())
}

thread_local! {
    static ZSTD_CONTEXT: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompress one batch's records section; `limit` caps the output size.
pub fn decompress(codec: Codec, data: &[u8], limit: usize, base_offset: i64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decompress_into(codec, data, limit, base_offset, &mut out)?;
    Ok(out)
}

/// Decompress one batch's records section into `out` (its allocation reused: its bytes are
/// overwritten, and only zero-filled where it has to grow); `limit` caps the output size.
pub fn decompress_into(
    codec: Codec,
    data: &[u8],
    limit: usize,
    base_offset: i64,
    out: &mut Vec<u8>,
) -> Result<()> {
    let hint = data.len().saturating_mul(4);
    match codec {
        Codec::None => {
            out.clear();
            out.extend_from_slice(data);
            Ok(())
        }
        Codec::Gzip => read_bounded(
            flate2::read::MultiGzDecoder::new(data),
            hint,
            limit,
            base_offset,
            codec,
            out,
        ),
        Codec::Snappy => snappy_decode(data, limit, base_offset, out),
        Codec::Lz4 => read_bounded(
            lz4_flex::frame::FrameDecoder::new(data),
            hint,
            limit,
            base_offset,
            codec,
            out,
        ),
        Codec::Zstd => ZSTD_CONTEXT.with(|cell| {
            // A decompression context costs more to create than a small batch costs to
            // decode, so each thread keeps one (reset before every frame).
            let mut guard = cell.borrow_mut();
            let context = match guard.as_mut() {
                Some(context) => context,
                None => guard.insert(
                    zstd::zstd_safe::DCtx::try_create()
                        .ok_or_else(|| failed(base_offset, codec, "cannot allocate a context"))?,
                ),
            };
            context
                .reset(zstd::zstd_safe::ResetDirective::SessionOnly)
                .map_err(|code| {
                    failed(base_offset, codec, zstd::zstd_safe::get_error_name(code))
                })?;
            let decoder = zstd::stream::read::Decoder::with_context(data, context);
            read_bounded(decoder, hint, limit, base_offset, codec, out)
        }),
    }
}

/// Compress a batch's records section as the Java producer does (snappy in xerial framing, lz4
/// as a frame of 64 KiB independent blocks without block checksums).
pub fn compress(codec: Codec, data: &[u8]) -> Result<Vec<u8>> {
    let io = |e: std::io::Error| RecordsError::Unencodable(format!("{}: {e}", codec.name()));
    match codec {
        Codec::None => Ok(data.to_vec()),
        Codec::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(data).map_err(io)?;
            enc.finish().map_err(io)
        }
        Codec::Snappy => {
            let mut out = Vec::with_capacity(data.len() / 2 + 32);
            out.extend_from_slice(&XERIAL_MAGIC);
            out.extend_from_slice(&1i32.to_be_bytes());
            out.extend_from_slice(&1i32.to_be_bytes());
            let mut enc = snap::raw::Encoder::new();
            for chunk in data.chunks(32 * 1024) {
                let block = enc
                    .compress_vec(chunk)
                    .map_err(|e| RecordsError::Unencodable(format!("snappy: {e}")))?;
                out.extend_from_slice(&(block.len() as u32).to_be_bytes());
                out.extend_from_slice(&block);
            }
            Ok(out)
        }
        Codec::Lz4 => {
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(data).map_err(io)?;
            enc.finish()
                .map_err(|e| RecordsError::Unencodable(format!("lz4: {e}")))
        }
        Codec::Zstd => zstd::stream::encode_all(data, 3).map_err(io),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: [Codec; 5] = [
        Codec::None,
        Codec::Gzip,
        Codec::Snappy,
        Codec::Lz4,
        Codec::Zstd,
    ];

    proptest! {
        #[test]
        fn round_trip_every_codec(data in proptest::collection::vec(any::<u8>(), 0..20_000)) {
            for codec in ALL {
                let packed = compress(codec, &data).unwrap();
                prop_assert_eq!(decompress(codec, &packed, data.len(), 0).unwrap(), data.clone());
            }
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            for codec in ALL {
                let _ = decompress(codec, &data, 1 << 20, 7);
            }
        }
    }

    #[test]
    fn reused_decoders_recover_from_failed_frames() {
        // zstd keeps a decoder per thread: a frame that fails half-way (too large, truncated,
        // garbage) or ends without its end mark must not leak state into the next one. (A
        // reused lz4 frame decoder did: fuzz/regressions/decompress_lz4-unfinished-frame.)
        let a: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let b = b"the next batch".repeat(100);
        for codec in [Codec::Lz4, Codec::Zstd] {
            let (pa, pb) = (compress(codec, &a).unwrap(), compress(codec, &b).unwrap());
            assert!(decompress(codec, &pa, 1000, 0).is_err(), "{codec:?} limit");
            assert_eq!(
                decompress(codec, &pb, usize::MAX, 0).unwrap(),
                b,
                "{codec:?}"
            );
            assert!(decompress(codec, &pa[..pa.len() / 2], usize::MAX, 0).is_err());
            assert_eq!(
                decompress(codec, &pa, usize::MAX, 0).unwrap(),
                a,
                "{codec:?}"
            );
            assert!(decompress(codec, b"\x04\x22\x4d\x18garbage", usize::MAX, 0).is_err());
            assert_eq!(
                decompress(codec, &pb, usize::MAX, 0).unwrap(),
                b,
                "{codec:?}"
            );
        }
    }

    #[test]
    fn reused_buffers_are_overwritten_and_bounded() {
        let small = b"small batch".repeat(10);
        let large: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
        for codec in ALL {
            let (ps, pl) = (
                compress(codec, &small).unwrap(),
                compress(codec, &large).unwrap(),
            );
            // Dirty and longer than the output, shorter, then longer again.
            let mut buf = vec![0xee; 300_000];
            decompress_into(codec, &ps, usize::MAX, 0, &mut buf).unwrap();
            assert_eq!(buf, small, "{codec:?}");
            decompress_into(codec, &pl, usize::MAX, 0, &mut buf).unwrap();
            assert_eq!(buf, large, "{codec:?}");
            decompress_into(codec, &ps, usize::MAX, 0, &mut buf).unwrap();
            assert_eq!(buf, small, "{codec:?}");
            // The limit holds whatever room the buffer already has.
            let mut roomy = Vec::with_capacity(1 << 20);
            roomy.resize(1 << 19, 1);
            if codec != Codec::None {
                let err = decompress_into(codec, &pl, 1000, 3, &mut roomy).unwrap_err();
                assert!(
                    matches!(
                        err,
                        RecordsError::DecompressedTooLarge {
                            base_offset: 3,
                            limit: 1000,
                            ..
                        }
                    ),
                    "{codec:?}: {err}"
                );
                decompress_into(codec, &pl, large.len(), 0, &mut roomy).unwrap();
                assert_eq!(roomy, large, "{codec:?} at the limit");
            }
        }
    }

    #[test]
    fn bombs_are_bounded() {
        let zeros = vec![0u8; 10 << 20];
        for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
            let packed = compress(codec, &zeros).unwrap();
            assert!(
                packed.len() < zeros.len() / 10,
                "{codec:?} compresses zeros"
            );
            let err = decompress(codec, &packed, 1 << 20, 5).unwrap_err();
            assert!(
                matches!(err, RecordsError::DecompressedTooLarge { base_offset: 5, limit, .. } if limit == 1 << 20),
                "{codec:?}: {err}"
            );
        }
    }

    #[test]
    fn raw_snappy_without_xerial_header_decodes() {
        let data = b"hello hello hello hello".repeat(10);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(Codec::Snappy, &raw, 1 << 20, 0).unwrap(), data);
        let framed = compress(Codec::Snappy, &data).unwrap();
        assert_eq!(&framed[..8], &XERIAL_MAGIC);
        assert_eq!(
            decompress(Codec::Snappy, &framed, 1 << 20, 0).unwrap(),
            data
        );
    }

    #[test]
    fn truncated_xerial_block_is_an_error() {
        let framed = compress(Codec::Snappy, &b"abc".repeat(100)).unwrap();
        let err = decompress(Codec::Snappy, &framed[..framed.len() - 2], 1 << 20, 9).unwrap_err();
        assert!(
            matches!(err, RecordsError::Decompression { base_offset: 9, .. }),
            "{err}"
        );
    }
}
