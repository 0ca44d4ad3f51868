//! Record batch v2 encoding, for the producer and for tests.

use super::batch::{ATTR_CONTROL, ATTR_LOG_APPEND_TIME, ATTR_TRANSACTIONAL, BATCH_HEADER_LEN};
use super::compression::{compress, Codec};
use super::error::{RecordsError, Result};
use super::sizes;
use crate::protocol::codec::{put_varint, put_varlong};

/// One record to write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// Batch-level settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOptions {
    pub base_offset: i64,
    pub codec: Codec,
    pub log_append_time: bool,
    pub transactional: bool,
    pub control: bool,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub partition_leader_epoch: i32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            base_offset: 0,
            codec: Codec::None,
            log_append_time: false,
            transactional: false,
            control: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            partition_leader_epoch: -1,
        }
    }
}

/// A record field: its varint length (-1 for null), then its bytes.
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) -> Result<()> {
    match b {
        None => put_varint(out, -1),
        Some(b) => {
            let n = i32::try_from(b.len()).map_err(|_| {
                RecordsError::Unencodable(format!("{} bytes in one field", b.len()))
            })?;
            put_varint(out, n);
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

fn encode_record(out: &mut Vec<u8>, rec: &Record, delta: i32, base_ts: i64) -> Result<()> {
    let mut body = Vec::with_capacity(
        16 + rec.key.as_ref().map_or(0, Vec::len) + rec.value.as_ref().map_or(0, Vec::len),
    );
    body.push(0); // attributes
    put_varlong(&mut body, rec.timestamp.wrapping_sub(base_ts));
    put_varint(&mut body, delta);
    put_bytes(&mut body, rec.key.as_deref())?;
    put_bytes(&mut body, rec.value.as_deref())?;
    put_varint(&mut body, rec.headers.len() as i32);
    for (k, v) in &rec.headers {
        put_bytes(&mut body, Some(k.as_bytes()))?;
        put_bytes(&mut body, v.as_deref())?;
    }
    put_varint(out, body.len() as i32);
    out.extend_from_slice(&body);
    Ok(())
}

/// The records of one batch, encoded as they are appended (the producer's open batch): a
/// record is written once, into one buffer, and closing the batch only adds the header (and
/// compresses). Offset deltas count from 0; timestamp deltas from the first record's.
#[derive(Debug, Default)]
pub struct RecordsWriter {
    raw: Vec<u8>,
    count: i32,
    base_ts: i64,
    max_ts: i64,
}

impl RecordsWriter {
    pub fn new() -> Self {
        RecordsWriter {
            raw: Vec::new(),
            count: 0,
            base_ts: -1,
            max_ts: -1,
        }
    }

    /// Records appended so far.
    pub fn count(&self) -> i32 {
        self.count
    }

    /// The batch's size if closed now, uncompressed: header and records.
    pub fn size(&self) -> usize {
        BATCH_HEADER_LEN + self.raw.len()
    }

    /// Whether a record of `record_size` bytes (see [`RecordsWriter::record_size`]) goes into
    /// a batch held to `batch_size` bytes (uncompressed, header included): the first record
    /// always does, however large (a batch holds at least one record); a later one only while
    /// the batch stays within `batch_size`.
    pub fn has_room(&self, record_size: usize, batch_size: usize) -> bool {
        self.count == 0 || self.size() + record_size <= batch_size
    }

    /// The bytes `append` would add for this record (as the next one).
    pub fn record_size(
        &self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> usize {
        let body = self.body_len(timestamp, key, value, headers);
        sizes::with_prefix(body)
    }

    fn body_len(
        &self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> usize {
        let base_ts = if self.count == 0 {
            timestamp
        } else {
            self.base_ts
        };
        sizes::body_len(
            timestamp.wrapping_sub(base_ts),
            i64::from(self.count),
            key.map(<[u8]>::len),
            value.map(<[u8]>::len),
            headers.iter().map(|(k, v)| (k.len(), v.map(<[u8]>::len))),
        )
    }

    /// Append one record; refused (nothing written) when a field or the batch would pass what
    /// a batch can hold.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> Result<()> {
        let body = self.body_len(timestamp, key, value, headers);
        let size = sizes::with_prefix(body);
        if body > i32::MAX as usize / 2 || self.raw.len() + size > i32::MAX as usize / 2 {
            return Err(RecordsError::Unencodable(format!(
                "a record of {size} bytes after {} bytes of records",
                self.raw.len()
            )));
        }
        if self.count == i32::MAX {
            return Err(RecordsError::Unencodable("too many records".into()));
        }
        if self.count == 0 {
            self.base_ts = timestamp;
        }
        self.max_ts = self.max_ts.max(timestamp);
        let start = self.raw.len();
        self.raw.reserve(size);
        put_varint(&mut self.raw, body as i32);
        self.raw.push(0); // attributes
        put_varlong(&mut self.raw, timestamp.wrapping_sub(self.base_ts));
        put_varint(&mut self.raw, self.count);
        put_bytes(&mut self.raw, key)?;
        put_bytes(&mut self.raw, value)?;
        put_varint(&mut self.raw, headers.len() as i32);
        for (k, v) in headers {
            put_bytes(&mut self.raw, Some(k))?;
            put_bytes(&mut self.raw, *v)?;
        }
        debug_assert_eq!(self.raw.len() - start, size);
        self.count += 1;
        Ok(())
    }

    /// The whole batch, with header, compression and CRC (`opts.base_offset` and the
    /// producer fields as given); the writer keeps its records, for a retry.
    pub fn finish(&self, opts: &BatchOptions) -> Result<Vec<u8>> {
        finish_batch(&self.raw, self.count, self.base_ts, self.max_ts, opts)
    }

    /// Free the records (the batch is done).
    pub fn clear(&mut self) {
        self.raw = Vec::new();
    }
}

/// Encode `records` as one batch.
pub fn build_batch(records: &[Record], opts: &BatchOptions) -> Result<Vec<u8>> {
    let count = i32::try_from(records.len())
        .map_err(|_| RecordsError::Unencodable("too many records".into()))?;
    let base_ts = records.first().map_or(-1, |r| r.timestamp);
    let max_ts = records.iter().map(|r| r.timestamp).max().unwrap_or(-1);
    let mut raw = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        encode_record(&mut raw, rec, i as i32, base_ts)?;
    }
    finish_batch(&raw, count, base_ts, max_ts, opts)
}

/// Wrap `raw` (`count` encoded records) in a v2 batch header: compression, attributes, CRC.
pub fn finish_batch(
    raw: &[u8],
    count: i32,
    base_ts: i64,
    max_ts: i64,
    opts: &BatchOptions,
) -> Result<Vec<u8>> {
    let body = compress(opts.codec, raw)?;
    let mut attributes = opts.codec as i16;
    if opts.log_append_time {
        attributes |= ATTR_LOG_APPEND_TIME;
    }
    if opts.transactional {
        attributes |= ATTR_TRANSACTIONAL;
    }
    if opts.control {
        attributes |= ATTR_CONTROL;
    }
    let mut out = Vec::with_capacity(BATCH_HEADER_LEN + body.len());
    out.extend_from_slice(&opts.base_offset.to_be_bytes());
    let batch_length = i32::try_from(BATCH_HEADER_LEN - 12 + body.len())
        .map_err(|_| RecordsError::Unencodable("batch over 2 GiB".into()))?;
    out.extend_from_slice(&batch_length.to_be_bytes());
    out.extend_from_slice(&opts.partition_leader_epoch.to_be_bytes());
    out.push(2); // magic
    out.extend_from_slice(&[0; 4]); // crc, filled below
    out.extend_from_slice(&attributes.to_be_bytes());
    out.extend_from_slice(&(count - 1).max(0).to_be_bytes());
    out.extend_from_slice(&base_ts.to_be_bytes());
    out.extend_from_slice(&max_ts.to_be_bytes());
    out.extend_from_slice(&opts.producer_id.to_be_bytes());
    out.extend_from_slice(&opts.producer_epoch.to_be_bytes());
    out.extend_from_slice(&opts.base_sequence.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&body);
    let crc = crate::hash::crc32c(&out[21..]);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

/// A control batch with one COMMIT (1) or ABORT (0) marker.
pub fn build_control_batch(marker: i16, timestamp: i64, opts: &BatchOptions) -> Result<Vec<u8>> {
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&marker.to_be_bytes());
    // Value: int16 version 0, then int32 coordinator epoch.
    let value = vec![0u8; 6];
    let record = Record {
        timestamp,
        key: Some(key),
        value: Some(value),
        headers: vec![],
    };
    build_batch(
        &[record],
        &BatchOptions {
            control: true,
            transactional: true,
            codec: Codec::None,
            ..opts.clone()
        },
    )
}
