//! Record batch v2 decoding: one partition's raw `records` bytes from a Fetch response in,
//! columns of records out.
//!
//! Layout (offsets within a batch):
//! ```text
//! 0 baseOffset i64 | 8 batchLength i32 | 12 partitionLeaderEpoch i32 | 16 magic i8
//! 17 crc u32 (CRC-32C of bytes 21..end) | 21 attributes i16 | 23 lastOffsetDelta i32
//! 27 baseTimestamp i64 | 35 maxTimestamp i64 | 43 producerId i64 | 51 producerEpoch i16
//! 53 baseSequence i32 | 57 recordsCount i32 | 61 records (one compressed stream if codec != 0)
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use super::compression::{decompress, Codec};
use super::error::{RecordsError, Result};
use crate::protocol::codec::Reader;

pub const BATCH_HEADER_LEN: usize = 61;
/// `batchLength` counts the bytes after its own field.
const LENGTH_OFFSET: usize = 12;
const CRC_START: usize = 21;

pub const ATTR_CODEC_MASK: i16 = 0x07;
pub const ATTR_LOG_APPEND_TIME: i16 = 0x08;
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
pub const ATTR_CONTROL: i16 = 0x20;
pub const ATTR_DELETE_HORIZON: i16 = 0x40;

/// The fixed header of one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl BatchHeader {
    fn parse(b: &[u8]) -> BatchHeader {
        let i64_at = |o: usize| i64::from_be_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let i32_at = |o: usize| i32::from_be_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]));
        let i16_at = |o: usize| i16::from_be_bytes([b[o], b[o + 1]]);
        BatchHeader {
            base_offset: i64_at(0),
            batch_length: i32_at(8),
            partition_leader_epoch: i32_at(12),
            magic: b[16] as i8,
            crc: i32_at(17) as u32,
            attributes: i16_at(21),
            last_offset_delta: i32_at(23),
            base_timestamp: i64_at(27),
            max_timestamp: i64_at(35),
            producer_id: i64_at(43),
            producer_epoch: i16_at(51),
            base_sequence: i32_at(53),
            records_count: i32_at(57),
        }
    }

    pub fn codec_id(&self) -> u8 {
        (self.attributes & ATTR_CODEC_MASK) as u8
    }
    pub fn is_transactional(&self) -> bool {
        self.attributes & ATTR_TRANSACTIONAL != 0
    }
    pub fn is_control(&self) -> bool {
        self.attributes & ATTR_CONTROL != 0
    }
    pub fn timestamp_type(&self) -> u8 {
        u8::from(self.attributes & ATTR_LOG_APPEND_TIME != 0)
    }
    /// The offset after this batch: `base_offset + last_offset_delta + 1`.
    pub fn next_offset(&self) -> i64 {
        self.base_offset
            .saturating_add(i64::from(self.last_offset_delta))
            .saturating_add(1)
    }
    pub fn last_offset(&self) -> i64 {
        self.next_offset() - 1
    }
}

/// What to decode and how.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    pub check_crcs: bool,
    pub read_committed: bool,
    /// (producer_id, first_offset) from the Fetch response.
    pub aborted_transactions: Vec<(i64, i64)>,
    /// Records below this offset are skipped (a batch may start before the fetch position).
    pub start_offset: i64,
    /// The most bytes one batch may decompress to.
    pub max_decompressed_batch: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            check_crcs: true,
            read_committed: false,
            aborted_transactions: Vec::new(),
            start_offset: 0,
            max_decompressed_batch: 256 << 20,
        }
    }
}

/// A byte range in one of the decoded output's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// `INPUT` for the caller's records bytes, else an index into `DecodedRecords::owned`.
    pub buffer: u32,
    pub start: u32,
    pub len: u32,
}

impl Slot {
    pub const INPUT: u32 = u32::MAX;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderSlot {
    pub key: Slot,
    pub value: Option<Slot>,
}

/// Records of one partition, column by column. Keys, values and header parts are slots into
/// the input (uncompressed batches: no copy) or into decompressed buffers owned here.
#[derive(Debug, Default, Clone)]
pub struct DecodedRecords {
    pub owned: Vec<Vec<u8>>,
    pub offsets: Vec<i64>,
    pub timestamps: Vec<i64>,
    pub timestamp_types: Vec<u8>,
    pub keys: Vec<Option<Slot>>,
    pub values: Vec<Option<Slot>>,
    /// Record i's headers are `headers[header_starts[i]..header_starts[i + 1]]`.
    pub header_starts: Vec<u32>,
    pub headers: Vec<HeaderSlot>,
    /// The CRC of the batch each record came from (aiokafka's `checksum`).
    pub checksums: Vec<u32>,
    /// The position after the last whole batch read (None when no batch was complete).
    pub next_offset: Option<i64>,
    /// The partition leader epoch of the last whole batch read (for KIP-320's
    /// `last_fetched_epoch`; None when no batch was complete).
    pub last_leader_epoch: Option<i32>,
    /// The input ended inside a batch (normal at the fetch size limit).
    pub truncated: bool,
    pub skipped_below_start: u64,
    pub skipped_control: u64,
    pub skipped_aborted: u64,
    pub batches: u64,
}

impl DecodedRecords {
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The bytes of a slot (`input` is the records bytes that were decoded).
    pub fn bytes<'a>(&'a self, input: &'a [u8], slot: Slot) -> &'a [u8] {
        let buf: &[u8] = if slot.buffer == Slot::INPUT {
            input
        } else {
            &self.owned[slot.buffer as usize]
        };
        &buf[slot.start as usize..(slot.start + slot.len) as usize]
    }

    /// Room for `n` more records in every column (one batch's count, once it is known sane).
    fn reserve(&mut self, n: usize) {
        self.offsets.reserve(n);
        self.timestamps.reserve(n);
        self.timestamp_types.reserve(n);
        self.keys.reserve(n);
        self.values.reserve(n);
        self.header_starts.reserve(n);
        self.checksums.reserve(n);
    }

    pub fn header_range(&self, i: usize) -> std::ops::Range<usize> {
        self.header_starts[i] as usize..self.header_starts[i + 1] as usize
    }
}

/// Java's read_committed bookkeeping: aborted transactions are consumed in first-offset order
/// as batches reach them; a producer stays aborted until its ABORT marker.
struct AbortTracker {
    pending: BinaryHeap<Reverse<(i64, i64)>>,
    aborted: HashSet<i64>,
}

impl AbortTracker {
    fn new(list: &[(i64, i64)]) -> Self {
        AbortTracker {
            pending: list
                .iter()
                .map(|&(pid, first)| Reverse((first, pid)))
                .collect(),
            aborted: HashSet::new(),
        }
    }

    fn consume_up_to(&mut self, last_offset: i64) {
        while let Some(Reverse((first, pid))) = self.pending.peek().copied() {
            if first > last_offset {
                break;
            }
            self.pending.pop();
            self.aborted.insert(pid);
        }
    }
}

/// The control record type of a control batch's record key: 0 ABORT, 1 COMMIT.
fn control_type(key: &[u8]) -> Option<i16> {
    (key.len() >= 4).then(|| i16::from_be_bytes([key[2], key[3]]))
}

/// The position after the last whole batch in `input`, and that batch's partition leader
/// epoch, read from the batch headers alone (no CRC check, no decoding): where the next fetch
/// of the partition starts. `None` when no whole batch is present.
pub fn records_end(input: &[u8]) -> Option<(i64, i32)> {
    let mut pos = 0usize;
    let mut end = None;
    while let Some(rest) = input.get(pos..) {
        if rest.len() < BATCH_HEADER_LEN {
            break;
        }
        let batch_length = i32::from_be_bytes(rest[8..12].try_into().unwrap_or([0; 4]));
        let Ok(length) = usize::try_from(batch_length) else {
            break;
        };
        let total = LENGTH_OFFSET + length;
        if length < BATCH_HEADER_LEN - LENGTH_OFFSET || rest.len() < total {
            break;
        }
        let header = BatchHeader::parse(&rest[..total]);
        end = Some((header.next_offset(), header.partition_leader_epoch));
        pos += total;
    }
    end
}

/// The byte position where the batch with base offset `base_offset` starts in `input`, from
/// the batch headers alone; None when no whole-or-partial batch header there has that offset.
pub fn batch_position(input: &[u8], base_offset: i64) -> Option<usize> {
    let mut pos = 0usize;
    while let Some(rest) = input.get(pos..) {
        if rest.len() < LENGTH_OFFSET {
            return None;
        }
        if i64::from_be_bytes(rest[0..8].try_into().unwrap_or([0; 8])) == base_offset {
            return Some(pos);
        }
        let batch_length = i32::from_be_bytes(rest[8..12].try_into().unwrap_or([0; 4]));
        let length = usize::try_from(batch_length).ok()?;
        if length < BATCH_HEADER_LEN - LENGTH_OFFSET {
            return None;
        }
        pos = pos.checked_add(LENGTH_OFFSET + length)?;
    }
    None
}

/// Decode one partition's records bytes.
pub fn decode_records(input: &[u8], opts: &DecodeOptions) -> Result<DecodedRecords> {
    let mut out = DecodedRecords {
        header_starts: vec![0],
        ..Default::default()
    };
    let mut aborts = opts
        .read_committed
        .then(|| AbortTracker::new(&opts.aborted_transactions));
    let mut pos = 0usize;
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.len() < BATCH_HEADER_LEN.min(LENGTH_OFFSET + 5) {
            out.truncated = true;
            break;
        }
        let base_offset = i64::from_be_bytes(rest[0..8].try_into().unwrap_or([0; 8]));
        let batch_length = i32::from_be_bytes(rest[8..12].try_into().unwrap_or([0; 4]));
        let magic = rest[16] as i8;
        if magic != 2 {
            return Err(if magic == 0 || magic == 1 {
                RecordsError::LegacyMagic {
                    base_offset,
                    position: pos,
                    magic,
                }
            } else {
                RecordsError::UnknownMagic {
                    base_offset,
                    position: pos,
                    magic,
                }
            });
        }
        if batch_length < (BATCH_HEADER_LEN - LENGTH_OFFSET) as i32 {
            return Err(RecordsError::BatchTooShort {
                base_offset,
                position: pos,
                length: batch_length,
            });
        }
        let total = LENGTH_OFFSET + batch_length as usize;
        if rest.len() < total {
            out.truncated = true;
            break;
        }
        let batch = &rest[..total];
        let header = BatchHeader::parse(batch);
        if opts.check_crcs {
            let computed = crc32c::crc32c(&batch[CRC_START..]);
            if computed != header.crc {
                return Err(RecordsError::CrcMismatch {
                    base_offset,
                    position: pos,
                    stored: header.crc,
                    computed,
                });
            }
        }
        decode_batch(input, pos, &header, opts, aborts.as_mut(), &mut out)?;
        out.batches += 1;
        out.next_offset = Some(header.next_offset());
        out.last_leader_epoch = Some(header.partition_leader_epoch);
        pos += total;
    }
    Ok(out)
}

fn decode_batch(
    input: &[u8],
    pos: usize,
    header: &BatchHeader,
    opts: &DecodeOptions,
    aborts: Option<&mut AbortTracker>,
    out: &mut DecodedRecords,
) -> Result<()> {
    let base_offset = header.base_offset;
    let records_count = u64::try_from(header.records_count).unwrap_or(0);
    let mut control_marker_owner = None;
    if let Some(tracker) = aborts {
        if header.producer_id >= 0 {
            tracker.consume_up_to(header.last_offset());
            if header.is_control() {
                control_marker_owner = Some(tracker);
            } else if header.is_transactional() && tracker.aborted.contains(&header.producer_id) {
                out.skipped_aborted += records_count;
                return Ok(());
            }
        }
    }
    if header.is_control() && control_marker_owner.is_none() {
        out.skipped_control += records_count;
        return Ok(());
    }
    let codec = Codec::from_id(header.codec_id()).ok_or_else(|| RecordsError::UnknownCodec {
        base_offset,
        codec: header.codec_id(),
    })?;
    let body_start = pos + BATCH_HEADER_LEN;
    let body_end = pos + LENGTH_OFFSET + header.batch_length as usize;
    let owned = match codec {
        Codec::None => None,
        _ => Some(decompress(
            codec,
            &input[body_start..body_end],
            opts.max_decompressed_batch,
            base_offset,
        )?),
    };
    let (data, data_base, buffer) = match &owned {
        None => (&input[body_start..body_end], body_start, Slot::INPUT),
        Some(v) => (&v[..], 0, out.owned.len() as u32),
    };
    if let Some(tracker) = control_marker_owner {
        // A control batch: its one record's key says COMMIT or ABORT; it is never returned.
        let mut r = Reader::new(data);
        if first_record_key(&mut r).and_then(control_type) == Some(0) {
            tracker.aborted.remove(&header.producer_id);
        }
        out.skipped_control += records_count;
        return Ok(());
    }
    let count = header.records_count;
    if count < 0 || count as usize > data.len() {
        return Err(RecordsError::HostileRecordCount {
            base_offset,
            count: i64::from(count),
            bytes: data.len(),
        });
    }
    let ctx = RecordCtx {
        header,
        buffer,
        data_base,
        start_offset: opts.start_offset,
    };
    out.reserve(count as usize);
    let before = out.len();
    let mut r = Reader::new(data);
    for index in 0..count as usize {
        read_record(&mut r, &ctx, out).map_err(|what| RecordsError::CorruptRecord {
            base_offset,
            index,
            what,
        })?;
    }
    if r.remaining() != 0 {
        return Err(RecordsError::TrailingBytes {
            base_offset,
            count: r.remaining(),
        });
    }
    if let Some(v) = owned {
        if out.len() > before {
            out.owned.push(v);
        }
    }
    Ok(())
}

struct RecordCtx<'h> {
    header: &'h BatchHeader,
    buffer: u32,
    data_base: usize,
    start_offset: i64,
}

fn first_record_key<'a>(r: &mut Reader<'a>) -> Option<&'a [u8]> {
    let _len = r.varint().ok()?;
    r.i8().ok()?;
    r.varlong().ok()?;
    r.varint().ok()?;
    let key_len = r.varint().ok()?;
    usize::try_from(key_len)
        .ok()
        .and_then(|n| r.take(n, "key").ok())
}

type RecordResult<T> = std::result::Result<T, String>;

fn slot(ctx: &RecordCtx<'_>, r: &Reader<'_>, len: usize) -> RecordResult<Slot> {
    let start = ctx.data_base + r.position();
    let start = u32::try_from(start).map_err(|_| "buffer beyond 4 GiB".to_string())?;
    Ok(Slot {
        buffer: ctx.buffer,
        start,
        len: len as u32,
    })
}

/// A length-prefixed byte field: -1 is null, anything else must fit.
fn bytes_field(r: &mut Reader<'_>, ctx: &RecordCtx<'_>, what: &str) -> RecordResult<Option<Slot>> {
    let len = r.varint().map_err(|e| format!("{what} length: {e}"))?;
    if len == -1 {
        return Ok(None);
    }
    let n = usize::try_from(len).map_err(|_| format!("{what} length {len} is negative"))?;
    let s = slot(ctx, r, n)?;
    r.take(n, "field")
        .map_err(|_| format!("{what} of {n} bytes overruns the record"))?;
    Ok(Some(s))
}

fn read_record(
    batch: &mut Reader<'_>,
    ctx: &RecordCtx<'_>,
    out: &mut DecodedRecords,
) -> RecordResult<()> {
    let length = batch.varint().map_err(|e| format!("record length: {e}"))?;
    let length =
        usize::try_from(length).map_err(|_| format!("record length {length} is negative"))?;
    let record_start = batch.position();
    let body = batch
        .take(length, "record")
        .map_err(|_| format!("record of {length} bytes overruns its batch"))?;
    // Parse within the record's own bytes; slots are relative to the batch data.
    let mut r = Reader::new(body);
    let sub = RecordCtx {
        data_base: ctx.data_base + record_start,
        ..*ctx
    };
    r.i8().map_err(|e| format!("attributes: {e}"))?;
    let ts_delta = r.varlong().map_err(|e| format!("timestamp delta: {e}"))?;
    let offset_delta = r.varint().map_err(|e| format!("offset delta: {e}"))?;
    let key = bytes_field(&mut r, &sub, "key")?;
    let value = bytes_field(&mut r, &sub, "value")?;
    let header_count = r.varint().map_err(|e| format!("header count: {e}"))?;
    let header_count = usize::try_from(header_count)
        .map_err(|_| format!("header count {header_count} is negative"))?;
    if header_count > r.remaining() {
        return Err(format!(
            "{header_count} headers cannot fit in {} bytes",
            r.remaining()
        ));
    }
    let header_mark = out.headers.len();
    for h in 0..header_count {
        let key = bytes_field(&mut r, &sub, "header key")?
            .ok_or_else(|| format!("header {h} has a null key"))?;
        let k = sub_bytes(&r, &sub, key, body);
        if std::str::from_utf8(k).is_err() {
            out.headers.truncate(header_mark);
            return Err(format!("header {h} key is not UTF-8"));
        }
        let value = bytes_field(&mut r, &sub, "header value")?;
        out.headers.push(HeaderSlot { key, value });
    }
    if r.remaining() != 0 {
        out.headers.truncate(header_mark);
        return Err(format!(
            "{} bytes left over inside the record",
            r.remaining()
        ));
    }
    let offset = ctx
        .header
        .base_offset
        .saturating_add(i64::from(offset_delta));
    if offset < ctx.start_offset {
        out.headers.truncate(header_mark);
        out.skipped_below_start += 1;
        return Ok(());
    }
    let timestamp = if ctx.header.timestamp_type() == 1 {
        ctx.header.max_timestamp
    } else {
        ctx.header.base_timestamp.saturating_add(ts_delta)
    };
    out.offsets.push(offset);
    out.timestamps.push(timestamp);
    out.timestamp_types.push(ctx.header.timestamp_type());
    out.keys.push(key);
    out.values.push(value);
    out.checksums.push(ctx.header.crc);
    out.header_starts.push(out.headers.len() as u32);
    Ok(())
}

/// The bytes of a slot that lies inside `record` (the record being parsed).
fn sub_bytes<'a>(_r: &Reader<'_>, sub: &RecordCtx<'_>, s: Slot, record: &'a [u8]) -> &'a [u8] {
    let start = s.start as usize - sub.data_base;
    &record[start..start + s.len as usize]
}
