//! Request header v1/v2 and response header v0/v1.
//!
//! Request header v2 (flexible requests) adds a tagged-field section, but `client_id` keeps the
//! classic int16-length form. Response header v1 (flexible responses) adds tagged fields, except
//! that ApiVersions responses always use header v0 so that any client can read the error.

use super::codec::{put_length, put_tagged_fields, Reader, Version};
use super::error::{DecodeError, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeader {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub client_id: Option<String>,
}

const CLASSIC: Version = Version {
    version: 1,
    flexible: false,
};

impl RequestHeader {
    /// Encode as header v2 when `flexible`, else v1.
    pub fn write(&self, w: &mut Vec<u8>, flexible: bool) {
        w.extend_from_slice(&self.api_key.to_be_bytes());
        w.extend_from_slice(&self.api_version.to_be_bytes());
        w.extend_from_slice(&self.correlation_id.to_be_bytes());
        put_length(w, CLASSIC, false, self.client_id.as_ref().map(String::len));
        if let Some(id) = &self.client_id {
            w.extend_from_slice(id.as_bytes());
        }
        if flexible {
            put_tagged_fields(w, &[]);
        }
    }

    /// Read the fixed part (key, version, correlation id, client id). The caller decides from
    /// the key and version whether a tagged-field section follows ([`Self::read_tagged`]).
    pub fn read_fixed(r: &mut Reader<'_>) -> Result<Self> {
        let api_key = r.i16()?;
        let api_version = r.i16()?;
        let correlation_id = r.i32()?;
        let client_id = match r.length(CLASSIC, false, 1, "client_id")? {
            None => None,
            Some(n) => {
                let offset = r.position();
                let bytes = r.take(n, "client_id")?;
                Some(
                    std::str::from_utf8(bytes)
                        .map_err(|_| DecodeError::InvalidUtf8 {
                            what: "client_id",
                            offset,
                        })?
                        .to_owned(),
                )
            }
        };
        Ok(RequestHeader {
            api_key,
            api_version,
            correlation_id,
            client_id,
        })
    }

    pub fn read_tagged(r: &mut Reader<'_>) -> Result<()> {
        r.tagged_fields(|_, _| Ok(()))
    }
}

/// Write a response header (v1 when `flexible`, else v0).
pub fn write_response_header(w: &mut Vec<u8>, correlation_id: i32, flexible: bool) {
    w.extend_from_slice(&correlation_id.to_be_bytes());
    if flexible {
        put_tagged_fields(w, &[]);
    }
}

/// Read a response header; returns the correlation id.
pub fn read_response_header(r: &mut Reader<'_>, flexible: bool) -> Result<i32> {
    let correlation_id = r.i32()?;
    if flexible {
        r.tagged_fields(|_, _| Ok(()))?;
    }
    Ok(correlation_id)
}

/// The correlation id of a response frame, without decoding the rest (for routing a frame to
/// the request that awaits it).
pub fn peek_correlation_id(frame: &[u8]) -> Result<i32> {
    Reader::new(frame).i32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_v1_layout() {
        let h = RequestHeader {
            api_key: 18,
            api_version: 3,
            correlation_id: 7,
            client_id: Some("fk".into()),
        };
        let mut w = Vec::new();
        h.write(&mut w, false);
        assert_eq!(w, [0, 18, 0, 3, 0, 0, 0, 7, 0, 2, b'f', b'k']);
        let mut w2 = Vec::new();
        h.write(&mut w2, true);
        assert_eq!(
            &w2[..w.len()],
            &w[..],
            "client_id keeps the int16 form in v2"
        );
        assert_eq!(w2[w.len()..], [0]);
        let mut r = Reader::new(&w2);
        assert_eq!(RequestHeader::read_fixed(&mut r).unwrap(), h);
        RequestHeader::read_tagged(&mut r).unwrap();
        r.finish("header").unwrap();
    }

    #[test]
    fn null_client_id_round_trips() {
        let h = RequestHeader {
            api_key: 3,
            api_version: 12,
            correlation_id: -1,
            client_id: None,
        };
        let mut w = Vec::new();
        h.write(&mut w, true);
        let mut r = Reader::new(&w);
        assert_eq!(RequestHeader::read_fixed(&mut r).unwrap(), h);
    }

    #[test]
    fn response_headers() {
        let mut w = Vec::new();
        write_response_header(&mut w, 42, true);
        assert_eq!(w, [0, 0, 0, 42, 0]);
        assert_eq!(
            read_response_header(&mut Reader::new(&w), true).unwrap(),
            42
        );
        assert_eq!(peek_correlation_id(&w).unwrap(), 42);
        assert!(peek_correlation_id(&[0, 1]).is_err());
    }
}
