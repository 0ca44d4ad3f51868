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
    /// Every codec, in id order.
    pub const ALL: [Codec; 5] = [
        Codec::None,
        Codec::Gzip,
        Codec::Snappy,
        Codec::Lz4,
        Codec::Zstd,
    ];

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

    /// The codec named `name` (the producer's `compression_type`, `encode_batch`'s
    /// `compression`): one of [`Codec::name`]'s names.
    pub fn parse(name: &str) -> std::result::Result<Codec, UnknownCodec> {
        Codec::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| UnknownCodec(name.to_owned()))
    }
}

/// A compression name that is not a codec's; its message lists the names there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCodec(pub String);

impl std::fmt::Display for UnknownCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "compression: {:?} is not one of ", self.0)?;
        for (i, codec) in Codec::ALL.into_iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{}", codec.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownCodec {}

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

/// Read a streaming decoder to its end into `out[..n]`, returning `n`; fails once it produces
/// more than `limit` bytes. `out`'s bytes are overwritten, not cleared first: a reused buffer
/// is only zero-filled where it has to grow (and is left longer than `n` if it was).
fn read_bounded(
    mut reader: impl Read,
    hint: usize,
    limit: usize,
    base_offset: i64,
    codec: Codec,
    out: &mut Vec<u8>,
) -> Result<usize> {
    // At most one byte past the limit is read: that byte says the limit is passed.
    let cap = limit.saturating_add(1);
    let mut filled = 0;
    loop {
        if filled == out.len() {
            // Full: most often the stream is at its end, which a read into a few bytes on the
            // stack says without zero-filling more room first (a reused buffer's spare
            // capacity would be zero-filled on every batch).
            let mut probe = [0u8; 64];
            match reader.read(&mut probe) {
                Ok(0) => break,
                Ok(n) => {
                    if filled + n > limit {
                        return Err(too_large(base_offset, codec, limit));
                    }
                    out.extend_from_slice(&probe[..n]);
                    filled += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(failed(base_offset, codec, e)),
            }
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
    Ok(filled)
}

/// Append one raw snappy block to `out[..*filled]` (bytes past `filled` are overwritten).
/// The most a snappy block can expand: a 3-byte copy writes at most 64 bytes (the format's
/// densest element, 21.3 bytes out per byte in).
const SNAPPY_MAX_EXPANSION: usize = 22;

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
    // The output is allocated before decoding: a length no block of this size can decode to
    // is refused first, so a few bytes cannot claim gigabytes.
    if len > SNAPPY_MAX_EXPANSION.saturating_mul(block.len()) {
        return Err(failed(
            base_offset,
            Codec::Snappy,
            format!(
                "a {}-byte block claims {len} bytes, more than snappy can encode in it",
                block.len()
            ),
        ));
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

fn snappy_decode(data: &[u8], limit: usize, base_offset: i64, out: &mut Vec<u8>) -> Result<usize> {
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
    Ok(filled)
}

/// Where a gzip member's deflate stream starts (RFC 1952 header: the fixed ten bytes, then the
/// optional extra field, name and comment); None for a header this does not read (bad, or
/// with a header CRC), which the streaming decoder then reads (and reports on) instead.
fn gzip_body(member: &[u8]) -> Option<usize> {
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    if member.len() < 10 || member[..3] != [0x1f, 0x8b, 8] {
        return None;
    }
    let flags = member[3];
    if flags & !(FEXTRA | FNAME | FCOMMENT) != 0 {
        return None;
    }
    let mut pos = 10;
    if flags & FEXTRA != 0 {
        let len = member.get(pos..pos + 2)?;
        pos += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            pos += member.get(pos..)?.iter().position(|&b| b == 0)? + 1;
        }
    }
    (pos <= member.len()).then_some(pos)
}

/// gzip members inflated straight from `data` into `out[..n]`, each member's CRC-32 and size
/// checked; returns `n`. None when the first header is not one [`gzip_body`] reads. The
/// streaming decoder copies its input through a buffer of its own.
fn gzip_direct(
    data: &[u8],
    limit: usize,
    base_offset: i64,
    out: &mut Vec<u8>,
) -> Option<Result<usize>> {
    let mut at = gzip_body(data)?;
    Some(gzip_members(data, &mut at, limit, base_offset, out))
}

fn gzip_members(
    data: &[u8],
    at: &mut usize,
    limit: usize,
    base_offset: i64,
    out: &mut Vec<u8>,
) -> Result<usize> {
    let bad = |why: &dyn std::fmt::Display| failed(base_offset, Codec::Gzip, why);
    // At most one byte past the limit is written: that byte says the limit is passed.
    let cap = limit.saturating_add(1);
    // Deflate cannot inflate by more than 1032 to 1: the size a trailer claims is trusted only
    // that far (and never past the limit).
    let claimed = data.len().checked_sub(4).map_or(0, |end| {
        u32::from_le_bytes(data[end..].try_into().expect("4 bytes")) as usize
    });
    let first = claimed.min(data.len().saturating_mul(1032)).min(cap);
    if out.len() < first {
        out.resize(first, 0);
    }
    let mut inflate = flate2::Decompress::new(false);
    let mut filled = 0usize;
    loop {
        let start = filled;
        inflate.reset(false);
        let body = &data[*at..];
        loop {
            if filled == out.len() {
                let target = if out.capacity() > out.len() {
                    out.capacity()
                } else {
                    out.len() + out.len().max(32 << 10)
                };
                out.resize(target.min(cap), 0);
            }
            let (before_in, before_out) = (inflate.total_in(), inflate.total_out());
            let consumed = before_in as usize;
            let status = inflate
                .decompress(
                    &body[consumed..],
                    &mut out[filled..],
                    flate2::FlushDecompress::None,
                )
                .map_err(|e| bad(&e))?;
            let produced = (inflate.total_out() - before_out) as usize;
            filled += produced;
            if filled > limit {
                return Err(too_large(base_offset, Codec::Gzip, limit));
            }
            match status {
                flate2::Status::StreamEnd => break,
                _ if produced == 0 && inflate.total_in() == before_in && filled < out.len() => {
                    return Err(bad(&"the deflate stream ends early"));
                }
                _ => {}
            }
        }
        let end = *at + inflate.total_in() as usize;
        let trailer = data
            .get(end..end + 8)
            .ok_or_else(|| bad(&"the gzip trailer is cut short"))?;
        let mut crc = flate2::Crc::new();
        crc.update(&out[start..filled]);
        if crc.sum().to_le_bytes() != trailer[..4] {
            return Err(bad(&"the gzip CRC-32 does not match"));
        }
        if ((filled - start) as u32).to_le_bytes() != trailer[4..] {
            return Err(bad(&"the gzip size does not match"));
        }
        let next = end + 8;
        if next == data.len() {
            return Ok(filled);
        }
        *at = next + gzip_body(&data[next..]).ok_or_else(|| bad(&"a bad gzip member header"))?;
    }
}

const LZ4_MAGIC: u32 = 0x184D_2204;

/// An lz4 frame as Kafka's producers write it (one frame of independent blocks, no block or
/// content checksums, no dictionary), its blocks decompressed straight into `out[..n]`;
/// returns `n`. None for any other frame (or a bad header), which the streaming decoder then
/// reads (and reports on) instead: it copies every block out of a buffer of its own, allocated
/// and zero-filled for each frame.
fn lz4_direct(
    data: &[u8],
    limit: usize,
    base_offset: i64,
    out: &mut Vec<u8>,
) -> Option<Result<usize>> {
    let bad = |why: &str| Some(Err(failed(base_offset, Codec::Lz4, why)));
    let over = || Some(Err(too_large(base_offset, Codec::Lz4, limit)));
    if data.len() < 7 || data[..4] != LZ4_MAGIC.to_le_bytes() {
        return None;
    }
    let (flg, bd) = (data[4], data[5]);
    // Version 01 and independent blocks; any content size; nothing else.
    const CONTENT_SIZE: u8 = 0x08;
    if flg & !CONTENT_SIZE != 0x60 || bd & 0x8f != 0 || bd >> 4 < 4 {
        return None;
    }
    let max_block = 1usize << (8 + 2 * usize::from(bd >> 4));
    let header_len = if flg & CONTENT_SIZE != 0 { 15 } else { 7 };
    let header = data.get(..header_len)?;
    let check = twox_hash::XxHash32::oneshot(0, &header[4..header_len - 1]);
    if (check >> 8) as u8 != header[header_len - 1] {
        return None;
    }
    let content_size =
        (header_len == 15).then(|| u64::from_le_bytes(header[6..14].try_into().expect("8 bytes")));
    if let Some(size) = content_size {
        if size > limit as u64 {
            return over();
        }
    }
    // At most one byte past the limit is written: that byte says the limit is passed.
    let cap = limit.saturating_add(1);
    let mut pos = header_len;
    let mut filled = 0usize;
    loop {
        let Some(word) = data.get(pos..pos + 4) else {
            return bad("the frame ends before its end mark");
        };
        let word = u32::from_le_bytes(word.try_into().expect("4 bytes"));
        pos += 4;
        if word == 0 {
            break;
        }
        let len = (word & 0x7fff_ffff) as usize;
        if len > max_block {
            return bad("a block is larger than the frame's block size");
        }
        let Some(block) = data.get(pos..pos + len) else {
            return bad("a block overruns its data");
        };
        pos += len;
        if word & 0x8000_0000 != 0 {
            if filled + len > limit {
                return over();
            }
            if out.len() < filled + len {
                out.resize(filled + len, 0);
            }
            out[filled..filled + len].copy_from_slice(block);
            filled += len;
            continue;
        }
        let room = max_block.min(cap - filled);
        if out.len() < filled + room {
            out.resize(filled + room, 0);
        }
        let n = match lz4_flex::block::decompress_into(block, &mut out[filled..filled + room]) {
            Ok(n) => n,
            // Near the limit the room is less than a block, and the decoder may call it too
            // small for a block that would fit (it checks room before it knows the size), so
            // the block is decoded again into a block of its own to say which it is.
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if room < max_block => {
                let mut whole = vec![0u8; max_block];
                match lz4_flex::block::decompress_into(block, &mut whole) {
                    Ok(n) if n <= room => {
                        out[filled..filled + n].copy_from_slice(&whole[..n]);
                        n
                    }
                    Ok(_) => return over(),
                    Err(e) => return Some(Err(failed(base_offset, Codec::Lz4, e))),
                }
            }
            Err(e) => return Some(Err(failed(base_offset, Codec::Lz4, e))),
        };
        // Producers never write an empty compressed block (lz4's own decoder rejects the
        // shortest ones as truncated); read as nothing, it would hide the rest of the frame.
        if n == 0 {
            return bad("a compressed block holds no data");
        }
        filled += n;
        if filled > limit {
            return over();
        }
    }
    if pos != data.len() {
        // More frames (or bytes after the frame): the streaming decoder's business.
        return None;
    }
    if content_size.is_some_and(|size| size != filled as u64) {
        return bad("the frame's content size does not match its blocks");
    }
    Some(Ok(filled))
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
    let n = decompress_reusing(codec, data, limit, base_offset, out)?;
    out.truncate(n);
    Ok(())
}

/// Decompress one batch's records section into `out[..n]`, returning `n`; `limit` caps the
/// output size. `out` keeps its length if that is more than `n`: a buffer reused batch after
/// batch is zero-filled only when it grows, not again up to its length on every batch.
pub fn decompress_reusing(
    codec: Codec,
    data: &[u8],
    limit: usize,
    base_offset: i64,
    out: &mut Vec<u8>,
) -> Result<usize> {
    let hint = data.len().saturating_mul(4);
    match codec {
        Codec::None => {
            out.clear();
            out.extend_from_slice(data);
            Ok(data.len())
        }
        Codec::Gzip => match gzip_direct(data, limit, base_offset, out) {
            Some(done) => done,
            None => read_bounded(
                flate2::read::MultiGzDecoder::new(data),
                hint,
                limit,
                base_offset,
                codec,
                out,
            ),
        },
        Codec::Snappy => snappy_decode(data, limit, base_offset, out),
        Codec::Lz4 => match lz4_direct(data, limit, base_offset, out) {
            Some(done) => done,
            None => {
                let mut rest = data;
                let mut frames = lz4_flex::frame::FrameDecoder::new(&mut rest);
                let n = read_bounded(&mut frames, hint, limit, base_offset, codec, out)?;
                // The frame decoder reports an empty block as the end of the data: bytes it
                // has not read mean it stopped early, and what follows would be lost.
                if !frames.get_ref().is_empty() {
                    return Err(failed(
                        base_offset,
                        codec,
                        "the frame decoder stopped before the end of the data",
                    ));
                }
                Ok(n)
            }
        },
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

    #[test]
    fn codecs_are_parsed_by_name_and_an_unknown_name_lists_the_known_ones() {
        for codec in Codec::ALL {
            assert_eq!(Codec::parse(codec.name()), Ok(codec));
            assert_eq!(Codec::from_id(codec as u8), Some(codec));
        }
        let err = Codec::parse("LZ4").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"compression: "LZ4" is not one of none, gzip, snappy, lz4, zstd"#
        );
        assert_eq!(
            Codec::parse("a\"b").unwrap_err().to_string(),
            r#"compression: "a\"b" is not one of none, gzip, snappy, lz4, zstd"#
        );
    }

    proptest! {
        #[test]
        fn round_trip_every_codec(data in proptest::collection::vec(any::<u8>(), 0..20_000)) {
            for codec in Codec::ALL {
                let packed = compress(codec, &data).unwrap();
                prop_assert_eq!(decompress(codec, &packed, data.len(), 0).unwrap(), data.clone());
                // The limit is exact.
                if !data.is_empty() && codec != Codec::None {
                    prop_assert!(decompress(codec, &packed, data.len() - 1, 0).is_err());
                }
            }
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            for codec in Codec::ALL {
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
        for codec in Codec::ALL {
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
    fn a_snappy_block_claiming_more_than_it_can_hold_is_refused_before_allocating() {
        // A length varint claiming 4 GiB - 1, then one literal byte: allowed by a limit above
        // it, refused by what 7 bytes of snappy can decode to.
        let block = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, b'a'];
        let err = decompress(Codec::Snappy, &block, usize::MAX, 9).unwrap_err();
        assert!(
            matches!(err, RecordsError::Decompression { base_offset: 9, ref reason, .. }
                if reason.contains("claims 4294967295 bytes")),
            "{err}"
        );
    }

    fn lz4_frame(data: &[u8], info: lz4_flex::frame::FrameInfo) -> Vec<u8> {
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn lz4_frames_of_every_kind_decode_alike() {
        use lz4_flex::frame::{BlockMode, BlockSize, FrameInfo};
        // Compressible, then incompressible (stored as uncompressed blocks), over several
        // 64 KiB blocks.
        let mut data: Vec<u8> = (0..150_000u32).map(|i| (i % 97) as u8).collect();
        let mut x = 1u32;
        data.extend((0..100_000).map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        }));
        let independent = FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_mode(BlockMode::Independent);
        // (frame info, whether the direct path reads it)
        let kinds = [
            (independent.clone(), true),
            (
                independent.clone().content_size(Some(data.len() as u64)),
                true,
            ),
            (independent.clone().block_size(BlockSize::Max4MB), true),
            (independent.clone().block_checksums(true), false),
            (independent.clone().content_checksum(true), false),
            (independent.clone().block_mode(BlockMode::Linked), false),
        ];
        for (info, direct) in kinds {
            let packed = lz4_frame(&data, info.clone());
            let mut out = vec![7u8; 10];
            let got = lz4_direct(&packed, usize::MAX, 0, &mut out);
            assert_eq!(got.is_some(), direct, "{info:?}");
            if let Some(n) = got {
                assert_eq!(&out[..n.unwrap()], &data[..], "{info:?}");
            }
            assert_eq!(
                decompress(Codec::Lz4, &packed, data.len(), 0).unwrap(),
                data,
                "{info:?}"
            );
            assert!(matches!(
                decompress(Codec::Lz4, &packed, data.len() - 1, 4),
                Err(RecordsError::DecompressedTooLarge { base_offset: 4, .. })
            ));
            // Bytes after the frame: left to the streaming decoder, as before.
            let twice = [packed.clone(), packed].concat();
            let mut out = Vec::new();
            assert!(lz4_direct(&twice, usize::MAX, 0, &mut out).is_none());
        }
    }

    #[test]
    fn an_empty_lz4_block_is_an_error_at_any_limit() {
        // Found by the fuzzer: a frame whose first compressed block is one byte that the
        // block decoder reads as empty, then a stored block, then a second frame. Read as
        // nothing, the empty block ended the streaming decoder's output there (an empty
        // result with data unread), and the direct path called the limit 0 too small.
        let data = include_bytes!("../../fuzz/regressions/decompress_lz4-empty-block");
        for limit in [0, 1, 30, 1 << 20] {
            let err = decompress(Codec::Lz4, data, limit, 6).unwrap_err();
            assert!(
                matches!(err, RecordsError::Decompression { base_offset: 6, .. }),
                "limit {limit}: {err}"
            );
        }
        // The same block in a frame the streaming decoder reads (block checksums on): its
        // stopping early is an error too, not a short output.
        use lz4_flex::frame::FrameInfo;
        let mut framed = lz4_frame(b"", FrameInfo::new().block_checksums(true));
        let end = framed.split_off(framed.len() - 4);
        let block = [0x02u8];
        framed.extend_from_slice(&1u32.to_le_bytes());
        framed.extend_from_slice(&block);
        framed.extend_from_slice(&twox_hash::XxHash32::oneshot(0, &block).to_le_bytes());
        let stored = b"stored bytes";
        framed.extend_from_slice(&(0x8000_0000u32 | stored.len() as u32).to_le_bytes());
        framed.extend_from_slice(stored);
        framed.extend_from_slice(&twox_hash::XxHash32::oneshot(0, stored).to_le_bytes());
        framed.extend_from_slice(&end);
        let err = decompress(Codec::Lz4, &framed, 1 << 20, 6).unwrap_err();
        assert!(
            matches!(err, RecordsError::Decompression { base_offset: 6, .. }),
            "{err}"
        );
    }

    #[test]
    fn lz4_direct_rejects_bad_frames() {
        use lz4_flex::frame::FrameInfo;
        let data = b"kafka lz4 ".repeat(1000);
        let sized = lz4_frame(
            &data,
            FrameInfo::new().content_size(Some(data.len() as u64)),
        );
        // A content size that is not the blocks' total (header checksum made to match).
        let mut wrong = sized.clone();
        wrong[6] ^= 1;
        wrong[14] = (twox_hash::XxHash32::oneshot(0, &wrong[4..14]) >> 8) as u8;
        let err = decompress(Codec::Lz4, &wrong, usize::MAX, 2).unwrap_err();
        assert!(
            matches!(err, RecordsError::Decompression { base_offset: 2, .. }),
            "{err}"
        );
        // A content size beyond the limit fails before anything is decompressed.
        let err = decompress(Codec::Lz4, &sized, 100, 2).unwrap_err();
        assert!(
            matches!(err, RecordsError::DecompressedTooLarge { limit: 100, .. }),
            "{err}"
        );
        // A bad header checksum, a truncated frame, a block claiming more than the block
        // size: typed errors, whichever decoder reads them.
        let plain = lz4_frame(&data, FrameInfo::new());
        let mut bad_check = plain.clone();
        bad_check[6] ^= 0xff;
        let mut huge_block = plain.clone();
        huge_block[7..11].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
        for bad in [&bad_check[..], &plain[..plain.len() - 3], &huge_block[..]] {
            let err = decompress(Codec::Lz4, bad, usize::MAX, 1).unwrap_err();
            assert!(
                matches!(err, RecordsError::Decompression { base_offset: 1, .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn gzip_members_of_every_kind_decode_alike() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let member = |builder: flate2::GzBuilder, part: &[u8]| {
            let mut enc = builder.write(Vec::new(), flate2::Compression::default());
            enc.write_all(part).unwrap();
            enc.finish().unwrap()
        };
        let plain = member(flate2::GzBuilder::new(), &data);
        let named = member(
            flate2::GzBuilder::new()
                .filename("f")
                .comment("c")
                .extra(vec![1, 2, 3]),
            &data,
        );
        let two = [
            member(flate2::GzBuilder::new(), &data[..1000]),
            member(flate2::GzBuilder::new().filename("x"), &data[1000..]),
        ]
        .concat();
        for (name, packed) in [("plain", &plain), ("named", &named), ("two members", &two)] {
            let mut out = vec![9u8; 5];
            let n = gzip_direct(packed, usize::MAX, 0, &mut out)
                .expect("read directly")
                .unwrap();
            assert!(out[..n] == data[..], "{name}");
            assert_eq!(
                decompress(Codec::Gzip, packed, data.len(), 0).unwrap(),
                data
            );
            assert!(matches!(
                decompress(Codec::Gzip, packed, data.len() - 1, 6),
                Err(RecordsError::DecompressedTooLarge { base_offset: 6, .. })
            ));
        }
        // A bad CRC, a bad size, a cut stream, garbage after a member: typed errors.
        let mut bad_crc = plain.clone();
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 1;
        let mut bad_size = plain.clone();
        bad_size[n - 1] ^= 1;
        let cut = &plain[..n / 2];
        let trailing = [&plain[..], b"garbage"].concat();
        for bad in [&bad_crc[..], &bad_size[..], cut, &trailing[..]] {
            let err = decompress(Codec::Gzip, bad, usize::MAX, 8).unwrap_err();
            assert!(
                matches!(err, RecordsError::Decompression { base_offset: 8, .. }),
                "{err}"
            );
        }
        // A header with its own CRC is left to the streaming decoder.
        let mut with_hcrc = plain.clone();
        with_hcrc[3] |= 2;
        assert!(gzip_body(&with_hcrc).is_none());
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
