//! Decode/encode errors of the protocol core. Every variant says what was being read and where.

use thiserror::Error;

/// A failure to decode bytes from the wire (or to accept a value for encoding).
///
/// Errors from nested structures are wrapped in [`DecodeError::InField`], so the message reads
/// like a path: `MetadataResponse.topics: MetadataResponseTopic.name: truncated ...`.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DecodeError {
    #[error("truncated {what} at byte {offset}: needs {needed} bytes, {remaining} remain")]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
        remaining: usize,
    },
    #[error("invalid length {length} for {what} at byte {offset}")]
    InvalidLength {
        what: &'static str,
        offset: usize,
        length: i64,
    },
    #[error("{what} at byte {offset}: {count} elements cannot fit in the {remaining} bytes left")]
    HostileCount {
        what: &'static str,
        offset: usize,
        count: usize,
        remaining: usize,
    },
    #[error("varint at byte {offset} is longer than {max_bytes} bytes")]
    VarintTooLong { offset: usize, max_bytes: usize },
    #[error("{what} at byte {offset} is not valid UTF-8")]
    InvalidUtf8 { what: &'static str, offset: usize },
    #[error("{what}: {count} unexpected trailing bytes after byte {offset}")]
    TrailingBytes {
        what: &'static str,
        offset: usize,
        count: usize,
    },
    #[error("null {what} where the protocol requires a value, at byte {offset}")]
    UnexpectedNull { what: &'static str, offset: usize },
    #[error("api key {api_key} is not supported by ferrokafka")]
    UnknownApiKey { api_key: i16 },
    #[error("{api} version {version} is outside the supported range {min}..={max}")]
    UnsupportedVersion {
        api: &'static str,
        version: i16,
        min: i16,
        max: i16,
    },
    #[error("frame size {size} exceeds the maximum of {max} bytes")]
    FrameTooLarge { size: i64, max: usize },
    #[error("negative frame size {size}")]
    NegativeFrameSize { size: i32 },
    #[error("{at}: {source}")]
    InField {
        at: &'static str,
        source: Box<DecodeError>,
    },
    #[error("cannot encode {what}: {reason}")]
    Unencodable { what: &'static str, reason: String },
}

impl DecodeError {
    /// Wrap this error with the field being decoded (`Struct.field`).
    pub fn in_field(self, at: &'static str) -> Self {
        DecodeError::InField {
            at,
            source: Box::new(self),
        }
    }

    /// The innermost error, without field context.
    pub fn root(&self) -> &DecodeError {
        match self {
            DecodeError::InField { source, .. } => source.root(),
            other => other,
        }
    }
}

pub type Result<T, E = DecodeError> = std::result::Result<T, E>;
