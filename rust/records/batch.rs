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

use super::compression::{decompress_reusing, Codec};
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

/// The default of [`DecodeOptions::max_decompressed_batch`] (256 MiB): how large a batch is
/// once decompressed is known only by decompressing it, so without a bound a corrupt or
/// hostile batch could claim any amount of memory; real batches are far smaller (a broker's
/// `message.max.bytes` is about 1 MiB by default).
pub const DEFAULT_MAX_DECOMPRESSED_BATCH: usize = 256 << 20;

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            check_crcs: true,
            read_committed: false,
            aborted_transactions: Vec::new(),
            start_offset: 0,
            max_decompressed_batch: DEFAULT_MAX_DECOMPRESSED_BATCH,
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
    /// In a decompressed batch whose bytes a [`decode_records_taking`] hook took: in no
    /// buffer of the output ([`DecodedRecords::bytes`] panics on it).
    pub const TAKEN: u32 = u32::MAX - 1;

    /// Where the slot's bytes lie in its buffer (summed in usize: `start + len` may pass
    /// `u32::MAX`).
    #[inline]
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
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
    /// Where the next fetch starts and what was left out.
    pub summary: DecodeSummary,
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
        &buf[slot.range()]
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
    whole_batch_headers(input)
        .last()
        .map(|header| (header.next_offset(), header.partition_leader_epoch))
}

/// The last offset of each whole batch in `input`, in order, from the batch headers alone: where
/// a share consumer's poll that stops inside a batch finishes handing it out (KIP-932, as Java's
/// share consumer does).
pub fn batch_last_offsets(input: &[u8]) -> Vec<i64> {
    whole_batch_headers(input)
        .map(|header| header.last_offset())
        .collect()
}

/// The headers of the whole batches at the start of `input`, in order (a truncated or
/// impossible length ends them).
fn whole_batch_headers(input: &[u8]) -> impl Iterator<Item = BatchHeader> + '_ {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        let rest = input.get(pos..)?;
        if rest.len() < BATCH_HEADER_LEN {
            return None;
        }
        let batch_length = i32::from_be_bytes(rest[8..12].try_into().unwrap_or([0; 4]));
        let length = usize::try_from(batch_length).ok()?;
        let total = LENGTH_OFFSET + length;
        if length < BATCH_HEADER_LEN - LENGTH_OFFSET || rest.len() < total {
            return None;
        }
        pos += total;
        Some(BatchHeader::parse(&rest[..total]))
    })
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

/// What decoding one partition's records bytes found besides the records: where the next fetch
/// starts and what was left out. The same whatever the records went to (see [`RecordSink`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DecodeSummary {
    /// The position after the last whole batch read (None when no batch was complete).
    pub next_offset: Option<i64>,
    /// The partition leader epoch of the last whole batch read (None when no batch was
    /// complete).
    pub last_leader_epoch: Option<i32>,
    /// The input ended inside a batch (normal at the fetch size limit).
    pub truncated: bool,
    pub skipped_below_start: u64,
    pub skipped_control: u64,
    pub skipped_aborted: u64,
    pub batches: u64,
}

/// Where a batch's records section (the `data` a sink is given) lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchData {
    /// In the caller's input, from byte `start` on (an uncompressed batch).
    Input { start: usize },
    /// In a buffer decompressed from the batch, handed to [`RecordSink::end_batch`].
    Decompressed,
}

/// One record to return: its key and value are slices of the batch's records section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordFields<'a> {
    pub offset: i64,
    /// Milliseconds (the batch's max timestamp for log-append-time batches).
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
}

/// A batch whose records a sink is about to receive.
#[derive(Debug, Clone, Copy)]
pub struct BatchStart<'a> {
    pub header: &'a BatchHeader,
    /// Its (decompressed) records section: every slice given for its records lies in it.
    pub data: &'a [u8],
    pub at: BatchData,
    /// Its record count, already known to fit in `data`: at most this many records follow.
    pub max_records: usize,
    /// Input bytes from the batch's start to the end of the input: with the batch's own
    /// length, how much more is likely to follow (a hint for reserving room).
    pub input_left: usize,
}

impl BatchStart<'_> {
    /// `n` (an amount for this batch) scaled to the rest of the input, as if the rest were
    /// like this batch.
    pub fn scaled_to_input(&self, n: usize) -> usize {
        let wire = LENGTH_OFFSET as u128 + u128::from(self.header.batch_length.unsigned_abs());
        let scaled = n as u128 * self.input_left as u128 / wire.max(1);
        usize::try_from(scaled).unwrap_or(usize::MAX).max(n)
    }
}

/// Where decoded records go: [`decode_into`] does the batch-level work (CRC, decompression,
/// read_committed, control batches, start_offset, errors, the summary) once, and hands each
/// record it returns to a sink: slots into the input ([`DecodedRecords`], through
/// [`decode_records`]) or Arrow columns (`columns::ColumnsSink`).
///
/// Per batch: `begin_batch`, then per record returned `record`, its headers (`header`, in
/// order), `end_record`; then `end_batch`. After an error the sink's contents are unspecified
/// (the decode failed).
pub trait RecordSink {
    fn begin_batch(&mut self, batch: &BatchStart<'_>);
    fn record(&mut self, record: RecordFields<'_>);
    /// A header of the current record (its key is UTF-8: checked while parsing).
    fn header(&mut self, key: &str, value: Option<&[u8]>);
    fn end_record(&mut self);
    /// The batch is done; `owned` is the buffer its records section was decompressed into
    /// (None if uncompressed): that section is its first `BatchStart::data.len()` bytes (the
    /// buffer may be longer: reused buffers are not shortened).
    fn end_batch(&mut self, owned: Option<Vec<u8>>);
    /// A buffer to decompress the next compressed batch into: a sink that does not keep
    /// `end_batch`'s buffers can hand them back here to reuse their memory.
    fn decompression_buffer(&mut self) -> Vec<u8> {
        Vec::new()
    }
}

/// Given a decompressed batch's rows (`rows` of the output so far) and its records section,
/// which their slots point into; see [`decode_records_taking`].
pub type TakeBatch<'t> = dyn FnMut(&DecodedRecords, std::ops::Range<usize>, &[u8]) + 't;

/// The slots sink: fills a [`DecodedRecords`] with byte ranges into the input (uncompressed
/// batches: no copy) or into the decompressed buffers it keeps (or hands to `take`).
struct Slots<'d, 't> {
    out: &'d mut DecodedRecords,
    take: Option<&'d mut TakeBatch<'t>>,
    /// The last taken batch's buffer, reused for the next one.
    spare: Vec<u8>,
    /// The current batch: its buffer id, where its data starts in that buffer and in memory,
    /// its CRC and timestamp type, and the number of records before it.
    buffer: u32,
    data_base: usize,
    data_addr: usize,
    data_len: usize,
    crc: u32,
    timestamp_type: u8,
    first_row: usize,
}

impl Slots<'_, '_> {
    /// Point the slots of `rows` (and of their headers) at no buffer: their bytes were taken.
    fn mark_taken(&mut self, rows: std::ops::Range<usize>) {
        let out = &mut *self.out;
        for slot in out.keys[rows.clone()]
            .iter_mut()
            .chain(out.values[rows.clone()].iter_mut())
            .flatten()
        {
            slot.buffer = Slot::TAKEN;
        }
        let headers = out.header_starts[rows.start] as usize..out.header_starts[rows.end] as usize;
        for h in &mut out.headers[headers] {
            h.key.buffer = Slot::TAKEN;
            if let Some(v) = &mut h.value {
                v.buffer = Slot::TAKEN;
            }
        }
    }

    #[inline]
    fn slot(&self, bytes: &[u8]) -> Slot {
        // The parser checked that every field starts below 4 GiB in its buffer.
        let start = self.data_base + (bytes.as_ptr() as usize - self.data_addr);
        Slot {
            buffer: self.buffer,
            start: start as u32,
            len: bytes.len() as u32,
        }
    }
}

impl RecordSink for Slots<'_, '_> {
    fn begin_batch(&mut self, batch: &BatchStart<'_>) {
        (self.buffer, self.data_base) = match batch.at {
            BatchData::Input { start } => (Slot::INPUT, start),
            BatchData::Decompressed => (self.out.owned.len() as u32, 0),
        };
        self.data_addr = batch.data.as_ptr() as usize;
        self.data_len = batch.data.len();
        self.crc = batch.header.crc;
        self.timestamp_type = batch.header.timestamp_type();
        self.first_row = self.out.len();
        self.out.reserve(batch.max_records);
    }

    #[inline]
    fn record(&mut self, r: RecordFields<'_>) {
        let key = r.key.map(|k| self.slot(k));
        let value = r.value.map(|v| self.slot(v));
        let out = &mut *self.out;
        out.offsets.push(r.offset);
        out.timestamps.push(r.timestamp);
        out.timestamp_types.push(self.timestamp_type);
        out.keys.push(key);
        out.values.push(value);
        out.checksums.push(self.crc);
    }

    #[inline]
    fn header(&mut self, key: &str, value: Option<&[u8]>) {
        let h = HeaderSlot {
            key: self.slot(key.as_bytes()),
            value: value.map(|v| self.slot(v)),
        };
        self.out.headers.push(h);
    }

    #[inline]
    fn end_record(&mut self) {
        self.out.header_starts.push(self.out.headers.len() as u32);
    }

    fn end_batch(&mut self, owned: Option<Vec<u8>>) {
        let Some(v) = owned else { return };
        let rows = self.first_row..self.out.len();
        if rows.is_empty() {
            self.spare = v;
            return;
        }
        match self.take.as_mut() {
            None => {
                let mut v = v;
                v.truncate(self.data_len);
                self.out.owned.push(v);
            }
            Some(take) => {
                take(self.out, rows.clone(), &v);
                self.mark_taken(rows);
                self.spare = v;
            }
        }
    }

    fn decompression_buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.spare)
    }
}

/// Decode one partition's records bytes into slots.
pub fn decode_records(input: &[u8], opts: &DecodeOptions) -> Result<DecodedRecords> {
    decode_slots(input, opts, None)
}

/// Decode one partition's records bytes into slots, handing each decompressed batch to `take`
/// as soon as its records are parsed, while its bytes are still in the CPU's cache, instead of
/// keeping it: the slots of its rows become [`Slot::TAKEN`] afterwards, and its buffer is
/// reused for the next batch. Uncompressed batches stay slots into the input.
///
/// A fetch of very compressible records inflates to tens of megabytes: kept whole and copied
/// out afterwards, every byte of it is written to memory and read back from it.
pub fn decode_records_taking(
    input: &[u8],
    opts: &DecodeOptions,
    take: &mut TakeBatch<'_>,
) -> Result<DecodedRecords> {
    decode_slots(input, opts, Some(take))
}

fn decode_slots(
    input: &[u8],
    opts: &DecodeOptions,
    take: Option<&mut TakeBatch<'_>>,
) -> Result<DecodedRecords> {
    let mut out = DecodedRecords {
        header_starts: vec![0],
        ..Default::default()
    };
    let mut sink = Slots {
        out: &mut out,
        take,
        spare: Vec::new(),
        buffer: Slot::INPUT,
        data_base: 0,
        data_addr: 0,
        data_len: 0,
        crc: 0,
        timestamp_type: 0,
        first_row: 0,
    };
    out.summary = decode_into(input, opts, &mut sink)?;
    Ok(out)
}

/// Decode one partition's records bytes, handing every record returned to `sink`.
pub fn decode_into<S: RecordSink>(
    input: &[u8],
    opts: &DecodeOptions,
    sink: &mut S,
) -> Result<DecodeSummary> {
    let mut summary = DecodeSummary::default();
    let mut aborts = opts
        .read_committed
        .then(|| AbortTracker::new(&opts.aborted_transactions));
    let mut pos = 0usize;
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.len() < BATCH_HEADER_LEN.min(LENGTH_OFFSET + 5) {
            summary.truncated = true;
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
            summary.truncated = true;
            break;
        }
        let batch = &rest[..total];
        let header = BatchHeader::parse(batch);
        if opts.check_crcs {
            let computed = crate::hash::crc32c(&batch[CRC_START..]);
            if computed != header.crc {
                return Err(RecordsError::CrcMismatch {
                    base_offset,
                    position: pos,
                    stored: header.crc,
                    computed,
                });
            }
        }
        decode_batch(
            input,
            pos,
            &header,
            opts,
            aborts.as_mut(),
            &mut summary,
            sink,
        )?;
        summary.batches += 1;
        summary.next_offset = Some(header.next_offset());
        summary.last_leader_epoch = Some(header.partition_leader_epoch);
        pos += total;
    }
    Ok(summary)
}

fn decode_batch<S: RecordSink>(
    input: &[u8],
    pos: usize,
    header: &BatchHeader,
    opts: &DecodeOptions,
    aborts: Option<&mut AbortTracker>,
    summary: &mut DecodeSummary,
    sink: &mut S,
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
                summary.skipped_aborted += records_count;
                return Ok(());
            }
        }
    }
    if header.is_control() && control_marker_owner.is_none() {
        summary.skipped_control += records_count;
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
        _ => {
            let mut buffer = sink.decompression_buffer();
            let n = decompress_reusing(
                codec,
                &input[body_start..body_end],
                opts.max_decompressed_batch,
                base_offset,
                &mut buffer,
            )?;
            Some((buffer, n))
        }
    };
    let (data, at) = match &owned {
        None => (
            &input[body_start..body_end],
            BatchData::Input { start: body_start },
        ),
        Some((v, n)) => (&v[..*n], BatchData::Decompressed),
    };
    if let Some(tracker) = control_marker_owner {
        // A control batch: its one record's key says COMMIT or ABORT; it is never returned.
        let mut r = Reader::new(data);
        if first_record_key(&mut r).and_then(control_type) == Some(0) {
            tracker.aborted.remove(&header.producer_id);
        }
        summary.skipped_control += records_count;
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
    let count = count as usize;
    sink.begin_batch(&BatchStart {
        header,
        data,
        at,
        max_records: count,
        input_left: input.len() - pos,
    });
    let data_base = match at {
        BatchData::Input { start } => start,
        BatchData::Decompressed => 0,
    };
    let ctx = RecordCtx {
        base_offset,
        base_timestamp: header.base_timestamp,
        log_append_time: (header.timestamp_type() == 1).then_some(header.max_timestamp),
        start_offset: opts.start_offset,
        data_base,
        positions_fit: data_base.saturating_add(data.len()) <= u32::MAX as usize,
    };
    let read = if ctx.positions_fit {
        read_records::<S, true>(data, &ctx, count, sink, summary)
    } else {
        read_records::<S, false>(data, &ctx, count, sink, summary)
    };
    let at_byte = match read {
        Ok(end) => end,
        Err((index, record_start)) => {
            return Err(RecordsError::CorruptRecord {
                base_offset,
                index,
                what: describe_malformed(data, record_start, data_base),
            })
        }
    };
    if at_byte != data.len() {
        return Err(RecordsError::TrailingBytes {
            base_offset,
            count: data.len() - at_byte,
        });
    }
    sink.end_batch(owned.map(|(buffer, _)| buffer));
    Ok(())
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

/// What the record parser needs of its batch.
struct RecordCtx {
    base_offset: i64,
    base_timestamp: i64,
    /// The batch's max timestamp when it is log-append-time (every record gets it).
    log_append_time: Option<i64>,
    start_offset: i64,
    /// Where the batch's data starts in its buffer (slots must start below 4 GiB).
    data_base: usize,
    /// The whole batch's data lies below 4 GiB in its buffer: no per-field check needed.
    positions_fit: bool,
}

/// A record that does not parse; [`describe_malformed`] says why and where, off the hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Malformed;

type Parsed<T> = std::result::Result<T, Malformed>;

/// Unsigned LEB128 of at most `max_bytes` bytes, as `Reader` reads it (bits past 64 are
/// dropped). The one- and two-byte cases are inline.
#[inline(always)]
fn uvarint(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Parsed<u64> {
    let p = *pos;
    if let Some(&b) = buf.get(p) {
        if b < 0x80 {
            *pos = p + 1;
            return Ok(u64::from(b));
        }
        // Two bytes: lengths of 64 B to 8 KiB, deltas of up to 8k.
        if let Some(&c) = buf.get(p + 1) {
            if c < 0x80 {
                *pos = p + 2;
                return Ok(u64::from(b & 0x7f) | u64::from(c) << 7);
            }
        }
    }
    uvarint_long(buf, pos, max_bytes)
}

#[inline(never)]
fn uvarint_long(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Parsed<u64> {
    let rest = buf.get(*pos..).unwrap_or_default();
    let mut value: u64 = 0;
    for (i, &b) in rest.iter().take(max_bytes).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *pos += i + 1;
            return Ok(value);
        }
    }
    Err(Malformed)
}

/// Zig-zag varlong (at most 10 bytes).
#[inline(always)]
fn varlong(buf: &[u8], pos: &mut usize) -> Parsed<i64> {
    let v = uvarint(buf, pos, 10)?;
    Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
}

/// Parse `count` records from the start of `data` into `sink`; the position after them, or
/// the index and position of the first malformed one. `FIT`: the whole data lies below 4 GiB
/// in its buffer (no per-field position check).
fn read_records<S: RecordSink, const FIT: bool>(
    data: &[u8],
    ctx: &RecordCtx,
    count: usize,
    sink: &mut S,
    summary: &mut DecodeSummary,
) -> std::result::Result<usize, (usize, usize)> {
    let mut at_byte = 0usize;
    for index in 0..count {
        let record_start = at_byte;
        match read_record::<S, FIT>(data, &mut at_byte, ctx, sink) {
            Ok(true) => {}
            Ok(false) => summary.skipped_below_start += 1,
            Err(Malformed) => return Err((index, record_start)),
        }
    }
    Ok(at_byte)
}

/// Zig-zag varint (at most 5 bytes, and within 32 bits); the one- and two-byte cases inline.
#[inline(always)]
fn varint(buf: &[u8], pos: &mut usize) -> Parsed<i32> {
    let p = *pos;
    if let Some(&b) = buf.get(p) {
        if b < 0x80 {
            *pos = p + 1;
            return Ok(zigzag32(u32::from(b)));
        }
        if let Some(&c) = buf.get(p + 1) {
            if c < 0x80 {
                *pos = p + 2;
                return Ok(zigzag32(u32::from(b & 0x7f) | u32::from(c) << 7));
            }
        }
    }
    varint_long(buf, pos)
}

#[inline(always)]
fn zigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

#[inline(never)]
fn varint_long(buf: &[u8], pos: &mut usize) -> Parsed<i32> {
    let v = uvarint_long(buf, pos, 5)?;
    let v = u32::try_from(v).map_err(|_| Malformed)?;
    Ok(zigzag32(v))
}

/// A length-prefixed byte field of a record: -1 is null, anything else must fit (and, unless
/// `FIT`, start below `limit` within `record`).
#[inline(always)]
fn bytes_field<'a, const FIT: bool>(
    record: &'a [u8],
    pos: &mut usize,
    limit: u64,
) -> Parsed<Option<&'a [u8]>> {
    let len = varint(record, pos)?;
    if len < 0 {
        return if len == -1 { Ok(None) } else { Err(Malformed) };
    }
    let start = *pos;
    if !FIT && start as u64 >= limit {
        return Err(Malformed);
    }
    let end = start + len as usize;
    let field = record.get(start..end).ok_or(Malformed)?;
    *pos = end;
    Ok(Some(field))
}

/// Parse the record at `*pos` of a batch's data and hand it to `sink` unless it is below the
/// start offset. Ok(false): skipped (still checked whole).
#[inline(always)]
fn read_record<S: RecordSink, const FIT: bool>(
    data: &[u8],
    pos: &mut usize,
    ctx: &RecordCtx,
    sink: &mut S,
) -> Parsed<bool> {
    let length = varint(data, pos)?;
    if length < 0 {
        return Err(Malformed);
    }
    let record_start = *pos;
    let record_end = record_start + length as usize;
    let body = data.get(record_start..record_end).ok_or(Malformed)?;
    *pos = record_end;
    // Fields of this record may start below `limit` (slots are 32-bit).
    let limit = if FIT {
        u64::MAX
    } else {
        (1u64 << 32).saturating_sub((ctx.data_base + record_start) as u64)
    };
    // Attributes (unused), then the deltas.
    if body.is_empty() {
        return Err(Malformed);
    }
    let mut p = 1usize;
    let ts_delta = varlong(body, &mut p)?;
    let offset_delta = varint(body, &mut p)?;
    let key = bytes_field::<FIT>(body, &mut p, limit)?;
    let value = bytes_field::<FIT>(body, &mut p, limit)?;
    let header_count = varint(body, &mut p)?;
    if header_count < 0 || header_count as usize > body.len() - p {
        return Err(Malformed);
    }
    let offset = ctx.base_offset.saturating_add(i64::from(offset_delta));
    let keep = offset >= ctx.start_offset;
    if keep {
        let timestamp = match ctx.log_append_time {
            Some(max) => max,
            // Wrapping, as the encoders compute the delta (and as Kafka's Java client does both):
            // any timestamp encoded decodes to itself.
            None => ctx.base_timestamp.wrapping_add(ts_delta),
        };
        sink.record(RecordFields {
            offset,
            timestamp,
            key,
            value,
        });
    }
    for _ in 0..header_count {
        let key = bytes_field::<FIT>(body, &mut p, limit)?.ok_or(Malformed)?;
        let key = std::str::from_utf8(key).map_err(|_| Malformed)?;
        let value = bytes_field::<FIT>(body, &mut p, limit)?;
        if keep {
            sink.header(key, value);
        }
    }
    if p != body.len() {
        return Err(Malformed);
    }
    if keep {
        sink.end_record();
    }
    Ok(keep)
}

type RecordResult<T> = std::result::Result<T, String>;

/// Why the record at `start` of a batch's `data` is malformed, read again with the checked
/// `Reader` (what fails and where, positions as the reader counts them): only run once the
/// fast parser has refused the record. `data_base` is where `data` starts in its buffer.
fn describe_malformed(data: &[u8], start: usize, data_base: usize) -> String {
    let mut r = Reader::new(data);
    let checked = r
        .take(start, "records")
        .map_err(|e| e.to_string())
        .and_then(|_| check_record(&mut r, data_base));
    match checked {
        Err(what) => what,
        Ok(()) => {
            debug_assert!(false, "the record parsers disagree");
            "malformed record".to_string()
        }
    }
}

/// A length-prefixed byte field: -1 is null, anything else must fit. `base` is where the
/// reader's buffer starts in the batch's buffer (slots are 32-bit).
fn check_bytes_field<'a>(
    r: &mut Reader<'a>,
    base: usize,
    what: &str,
) -> RecordResult<Option<&'a [u8]>> {
    let len = r.varint().map_err(|e| format!("{what} length: {e}"))?;
    if len == -1 {
        return Ok(None);
    }
    let n = usize::try_from(len).map_err(|_| format!("{what} length {len} is negative"))?;
    if u32::try_from(base + r.position()).is_err() {
        return Err("buffer beyond 4 GiB".to_string());
    }
    let field = r
        .take(n, "field")
        .map_err(|_| format!("{what} of {n} bytes overruns the record"))?;
    Ok(Some(field))
}

fn check_record(batch: &mut Reader<'_>, base: usize) -> RecordResult<()> {
    let length = batch.varint().map_err(|e| format!("record length: {e}"))?;
    let length =
        usize::try_from(length).map_err(|_| format!("record length {length} is negative"))?;
    let record_start = batch.position();
    let body = batch
        .take(length, "record")
        .map_err(|_| format!("record of {length} bytes overruns its batch"))?;
    let base = base + record_start;
    let mut r = Reader::new(body);
    r.i8().map_err(|e| format!("attributes: {e}"))?;
    r.varlong().map_err(|e| format!("timestamp delta: {e}"))?;
    r.varint().map_err(|e| format!("offset delta: {e}"))?;
    check_bytes_field(&mut r, base, "key")?;
    check_bytes_field(&mut r, base, "value")?;
    let header_count = r.varint().map_err(|e| format!("header count: {e}"))?;
    let header_count = usize::try_from(header_count)
        .map_err(|_| format!("header count {header_count} is negative"))?;
    if header_count > r.remaining() {
        return Err(format!(
            "{header_count} headers cannot fit in {} bytes",
            r.remaining()
        ));
    }
    for h in 0..header_count {
        let key = check_bytes_field(&mut r, base, "header key")?
            .ok_or_else(|| format!("header {h} has a null key"))?;
        if std::str::from_utf8(key).is_err() {
            return Err(format!("header {h} key is not UTF-8"));
        }
        check_bytes_field(&mut r, base, "header value")?;
    }
    if r.remaining() != 0 {
        return Err(format!(
            "{} bytes left over inside the record",
            r.remaining()
        ));
    }
    Ok(())
}
