//! Size-prefixed framing: feed arbitrary chunks of a byte stream, take complete frames out.

use super::error::{DecodeError, Result};

/// The default cap on one frame (a response). Fetch responses are bounded by `fetch_max_bytes`
/// (default 50 MiB), so the default leaves room for that plus headers.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Splits a byte stream into frames of `int32 size` + `size` bytes.
///
/// A size prefix above `max_frame_size` (or negative) is an error, raised as soon as the four
/// size bytes arrive, before anything is allocated for the body; the decoder then stays failed,
/// since the stream can no longer be trusted.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    start: usize,
    max_frame_size: usize,
    failed: Option<DecodeError>,
}

impl FrameDecoder {
    pub fn new(max_frame_size: usize) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            start: 0,
            max_frame_size,
            failed: None,
        }
    }

    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Bytes received but not yet returned as a frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Append bytes from the stream.
    pub fn feed(&mut self, data: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// The next complete frame body (without its size prefix), if one is buffered.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let avail = &self.buf[self.start..];
        if avail.len() < 4 {
            return Ok(None);
        }
        let size = i32::from_be_bytes([avail[0], avail[1], avail[2], avail[3]]);
        if size < 0 {
            return Err(self.fail(DecodeError::NegativeFrameSize { size }));
        }
        let size = size as usize;
        if size > self.max_frame_size {
            return Err(self.fail(DecodeError::FrameTooLarge {
                size: size as i64,
                max: self.max_frame_size,
            }));
        }
        if avail.len() < 4 + size {
            // Reserve for the rest of this frame once, now that its size is known and bounded.
            let missing = 4 + size - avail.len();
            self.buf.reserve(missing);
            return Ok(None);
        }
        let begin = self.start + 4;
        self.start = begin + size;
        Ok(Some(&self.buf[begin..self.start]))
    }

    /// The next complete frame as an owned buffer and the range of the body within it. When the
    /// frame is the last thing received and fills most of the receive buffer (a large response),
    /// the buffer itself is handed over instead of copied; the decoder starts a new one.
    pub fn next_frame_owned(&mut self) -> Result<Option<(Vec<u8>, std::ops::Range<usize>)>> {
        let Some(len) = self.next_frame()?.map(<[u8]>::len) else {
            return Ok(None);
        };
        let end = self.start;
        let begin = end - len;
        if end == self.buf.len() && len >= self.buf.capacity() / 2 {
            self.start = 0;
            return Ok(Some((std::mem::take(&mut self.buf), begin..end)));
        }
        Ok(Some((self.buf[begin..end].to_vec(), 0..len)))
    }

    fn fail(&mut self, err: DecodeError) -> DecodeError {
        self.failed = Some(err.clone());
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    fn drain(d: &mut FrameDecoder) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(f) = d.next_frame().unwrap() {
            out.push(f.to_vec());
        }
        out
    }

    #[test]
    fn owned_frames_equal_borrowed_ones_and_large_ones_are_handed_over() {
        let big: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let bodies: Vec<Vec<u8>> = vec![b"small".to_vec(), big.clone(), vec![], b"tail".to_vec()];
        let stream: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
        for chunk in [1usize, 7, 4096, stream.len()] {
            let mut d = FrameDecoder::new(1 << 20);
            let mut got = Vec::new();
            for piece in stream.chunks(chunk) {
                d.feed(piece);
                while let Some((buf, range)) = d.next_frame_owned().unwrap() {
                    got.push(buf[range].to_vec());
                }
            }
            assert_eq!(got, bodies, "chunk {chunk}");
            assert_eq!(d.buffered(), 0);
        }
        // Fed alone, the large frame comes back in the receive buffer itself.
        let mut d = FrameDecoder::new(1 << 20);
        let one = frame(&big);
        d.feed(&one[..10]);
        assert!(d.next_frame_owned().unwrap().is_none());
        d.feed(&one[10..]);
        let (buf, range) = d.next_frame_owned().unwrap().unwrap();
        assert_eq!(range, 4..4 + big.len());
        assert_eq!(&buf[range], &big[..]);
        assert_eq!(d.buffered(), 0);
        d.feed(&frame(b"next"));
        let (buf, range) = d.next_frame_owned().unwrap().unwrap();
        assert_eq!(&buf[range], b"next");
    }

    #[test]
    fn split_at_every_boundary_decodes_the_same() {
        let bodies: Vec<Vec<u8>> = vec![b"hello".to_vec(), vec![], (0..=255u8).collect()];
        let stream: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
        for cut in 0..=stream.len() {
            let mut d = FrameDecoder::new(1024);
            let mut got = Vec::new();
            d.feed(&stream[..cut]);
            got.extend(drain(&mut d));
            d.feed(&stream[cut..]);
            got.extend(drain(&mut d));
            assert_eq!(got, bodies, "cut at {cut}");
            assert_eq!(d.buffered(), 0);
        }
    }

    proptest! {
        #[test]
        fn any_chunking_decodes_the_same(
            bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..8),
            chunk in 1usize..17,
        ) {
            let stream: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
            let mut d = FrameDecoder::new(1024);
            let mut got = Vec::new();
            for piece in stream.chunks(chunk) {
                d.feed(piece);
                got.extend(drain(&mut d));
            }
            prop_assert_eq!(got, bodies);
        }
    }

    #[test]
    fn oversized_frame_fails_before_allocating_and_stays_failed() {
        let mut d = FrameDecoder::new(16);
        d.feed(&(1_000_000_000i32).to_be_bytes());
        let err = d.next_frame().unwrap_err();
        assert_eq!(
            err,
            DecodeError::FrameTooLarge {
                size: 1_000_000_000,
                max: 16
            }
        );
        assert!(d.buf.capacity() < 1024);
        d.feed(&frame(b"ok"));
        assert!(d.next_frame().is_err());
    }

    #[test]
    fn negative_size_is_rejected() {
        let mut d = FrameDecoder::new(16);
        d.feed(&(-5i32).to_be_bytes());
        assert_eq!(
            d.next_frame().unwrap_err(),
            DecodeError::NegativeFrameSize { size: -5 }
        );
    }

    #[test]
    fn partial_frame_waits() {
        let mut d = FrameDecoder::new(16);
        d.feed(&frame(b"abcdef")[..7]);
        assert!(d.next_frame().unwrap().is_none());
        assert_eq!(d.buffered(), 7);
    }
}
