//! Record batch v2 encoding, for the producer and for tests.

use super::batch::{ATTR_CONTROL, ATTR_LOG_APPEND_TIME, ATTR_TRANSACTIONAL, BATCH_HEADER_LEN};
use super::compression::{compress, Codec};
use super::error::{RecordsError, Result};
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
