//! Size-prefixed framing: feed arbitrary chunks of a byte stream, take complete frames out.
//!
//! A large frame can also be received straight into its own buffer (`FrameStorage`): once its
//! size prefix is in, the decoder allocates the body and offers the unfilled part of it as the
//! receive window, so the socket writes each byte of a Fetch response exactly once.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use super::error::{DecodeError, Result};

/// The default cap on one frame (a response). Fetch responses are bounded by `fetch_max_bytes`
/// (default 50 MiB), so the default leaves room for that plus headers.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Frames at least this large are received into their own buffer when direct receiving is on.
pub const DEFAULT_DIRECT_MIN: usize = 64 * 1024;

/// The bytes of one received frame, shared by everything decoded from it.
///
/// Its length never changes after creation. A frame received directly is written in place:
/// its unfilled tail through [`FrameStorage::window_ptr`] (the socket's `recv_into`) and the
/// decoder's copies. It starts zeroed, so whatever a caller claims was received, the storage
/// never shows memory it did not write; it is handed out for reading once every byte has
/// arrived, and the receive window never covers bytes already received.
///
/// The allocation is held as one raw pointer taken when it is made: the window writes through
/// it and readers make shared slices of it, and no `&mut` to the whole buffer ever exists
/// beside them.
pub struct FrameStorage {
    ptr: NonNull<u8>,
    len: usize,
    capacity: usize,
}

// SAFETY: after the frame is complete the bytes are only read; before that, only the decoder
// that owns the frame (and the receive window it handed out, on the same thread) writes them.
unsafe impl Sync for FrameStorage {}
unsafe impl Send for FrameStorage {}

impl FrameStorage {
    pub fn from_vec(data: Vec<u8>) -> Self {
        let mut data = std::mem::ManuallyDrop::new(data);
        FrameStorage {
            // A Vec's pointer is never null (dangling but aligned when it has no capacity).
            ptr: NonNull::new(data.as_mut_ptr()).expect("a Vec's pointer is not null"),
            len: data.len(),
            capacity: data.capacity(),
        }
    }

    /// `len` zero bytes (from the allocator's zeroed memory: fresh pages cost no writes).
    fn zeroed(len: usize) -> Self {
        Self::from_vec(vec![0; len])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes. Only for a complete frame (every frame the decoder hands out is).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialized bytes (zeroed or a Vec's) for as long as self
        // lives; see the type's doc for why no write overlaps a read.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// A pointer to byte `at` for writing received bytes (the receive window).
    pub fn window_ptr(&self, at: usize) -> *mut u8 {
        assert!(at <= self.len);
        // SAFETY: `at` is within the fixed-length allocation; no reference is made.
        unsafe { self.ptr.as_ptr().add(at) }
    }

    /// The address range of the bytes (to refuse a source that lies inside them).
    pub fn address_range(&self) -> Range<usize> {
        let start = self.ptr.as_ptr() as usize;
        start..start + self.len
    }

    fn copy_in(&self, at: usize, src: &[u8]) {
        assert!(at + src.len() <= self.len);
        // SAFETY: in bounds (checked); only called for the unfilled part of a frame still being
        // received, which nothing reads. `copy` (not `copy_nonoverlapping`): the source is
        // the caller's and must not be trusted to lie elsewhere.
        unsafe { std::ptr::copy(src.as_ptr(), self.window_ptr(at), src.len()) };
    }
}

impl Drop for FrameStorage {
    fn drop(&mut self) {
        // SAFETY: the parts of the Vec that `from_vec` took apart, put back once.
        drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, self.capacity) });
    }
}

impl std::ops::Deref for FrameStorage {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.bytes()
    }
}

impl std::fmt::Debug for FrameStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrameStorage({} bytes)", self.len)
    }
}

/// A large frame being received straight into its storage.
#[derive(Debug)]
struct Direct {
    storage: Arc<FrameStorage>,
    filled: usize,
}

impl Direct {
    fn remaining(&self) -> usize {
        self.storage.len() - self.filled
    }
}

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
    direct_min: usize,
    direct: Option<Direct>,
}

impl FrameDecoder {
    pub fn new(max_frame_size: usize) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            start: 0,
            max_frame_size,
            failed: None,
            direct_min: usize::MAX,
            direct: None,
        }
    }

    /// A decoder that receives frames of `direct_min` bytes or more into their own storage
    /// (take frames with [`FrameDecoder::next_frame_owned`]).
    pub fn with_direct_min(max_frame_size: usize, direct_min: usize) -> Self {
        FrameDecoder {
            direct_min: direct_min.max(1),
            ..Self::new(max_frame_size)
        }
    }

    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Bytes received but not yet returned as a frame.
    pub fn buffered(&self) -> usize {
        let direct = self.direct.as_ref().map_or(0, |d| d.filled);
        self.buf.len() - self.start + direct
    }

    /// Append bytes from the stream.
    pub fn feed(&mut self, mut data: &[u8]) {
        if let Some(d) = self.direct.as_mut() {
            let n = d.remaining().min(data.len());
            d.storage.copy_in(d.filled, &data[..n]);
            d.filled += n;
            data = &data[n..];
            if data.is_empty() {
                return;
            }
        }
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Where the socket may write next without a copy: the unfilled part of the large frame
    /// being received (its storage and the range), or None (feed bytes instead).
    pub fn receive_window(&self) -> Option<(Arc<FrameStorage>, Range<usize>)> {
        let d = self.direct.as_ref()?;
        (d.remaining() > 0).then(|| (Arc::clone(&d.storage), d.filled..d.storage.len()))
    }

    /// Whether the large frame received directly is complete (the next frame out).
    pub fn holds_direct_frame(&self) -> bool {
        self.direct.as_ref().is_some_and(|d| d.remaining() == 0)
    }

    /// `n` bytes were written at the start of the last [`FrameDecoder::receive_window`].
    pub fn window_filled(&mut self, n: usize) {
        let d = self
            .direct
            .as_mut()
            .expect("window_filled without a receive window");
        assert!(n <= d.remaining(), "more bytes than the receive window");
        d.filled += n;
    }

    /// The length of the complete frame at the start of the buffer, if there is one.
    fn complete_len(&mut self) -> Result<Option<usize>> {
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
            if size >= self.direct_min {
                self.go_direct(size);
            } else {
                // Reserve for the rest of this frame once, now that its size is known and
                // bounded.
                let missing = 4 + size - avail.len();
                self.buf.reserve(missing);
            }
            return Ok(None);
        }
        Ok(Some(size))
    }

    /// Move the partly received frame at the start of the buffer (`size` bytes of body) into
    /// its own storage; what follows arrives there directly.
    fn go_direct(&mut self, size: usize) {
        let body = &self.buf[self.start + 4..];
        let storage = Arc::new(FrameStorage::zeroed(size));
        storage.copy_in(0, body);
        self.direct = Some(Direct {
            storage,
            filled: body.len(),
        });
        self.buf.clear();
        self.start = 0;
    }

    /// The next complete frame body (without its size prefix), if one is buffered.
    /// Only for decoders without direct receiving (use `next_frame_owned` there).
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>> {
        debug_assert!(
            self.direct_min == usize::MAX,
            "next_frame with direct receiving"
        );
        let Some(size) = self.complete_len()? else {
            return Ok(None);
        };
        let begin = self.start + 4;
        self.start = begin + size;
        Ok(Some(&self.buf[begin..self.start]))
    }

    /// The next complete frame as shared storage and the range of the body within it. A frame
    /// received directly is its own storage; when a frame is the last thing received and fills
    /// most of the receive buffer, the buffer itself is handed over instead of copied.
    pub fn next_frame_owned(&mut self) -> Result<Option<(Arc<FrameStorage>, Range<usize>)>> {
        if let Some(d) = &self.direct {
            if d.remaining() > 0 {
                return Ok(None);
            }
            let d = self.direct.take().expect("checked above");
            let len = d.storage.len();
            return Ok(Some((d.storage, 0..len)));
        }
        let Some(len) = self.complete_len()? else {
            return Ok(None);
        };
        let begin = self.start + 4;
        let end = begin + len;
        self.start = end;
        if end == self.buf.len() && len >= self.buf.capacity() / 2 {
            self.start = 0;
            let buf = std::mem::take(&mut self.buf);
            return Ok(Some((Arc::new(FrameStorage::from_vec(buf)), begin..end)));
        }
        let copy = self.buf[begin..end].to_vec();
        Ok(Some((Arc::new(FrameStorage::from_vec(copy)), 0..len)))
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
    fn a_direct_frame_shows_zeros_where_nothing_was_written() {
        // Freed memory of the same size, full of an old frame's bytes, is what the allocator
        // would hand out next.
        drop(std::hint::black_box(vec![0xAAu8; 100_000]));
        let mut d = FrameDecoder::with_direct_min(1 << 20, 1024);
        let mut head = 100_000i32.to_be_bytes().to_vec();
        head.extend_from_slice(b"abc");
        d.feed(&head);
        assert!(d.next_frame_owned().unwrap().is_none());
        let (_, range) = d.receive_window().unwrap();
        assert_eq!(range, 3..100_000);
        // The caller claims the rest arrived without writing it.
        d.window_filled(range.len());
        let (frame, r) = d.next_frame_owned().unwrap().unwrap();
        assert_eq!(&frame[r.clone()][..3], b"abc");
        assert!(frame[r][3..].iter().all(|&b| b == 0));
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

    /// Deliver `stream` in pieces of `chunk` bytes the way a buffered protocol does: into the
    /// receive window when the decoder offers one (at most `chunk` bytes), else by feeding.
    fn receive_all(d: &mut FrameDecoder, stream: &[u8], chunk: usize) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let mut pos = 0;
        while pos < stream.len() {
            if let Some((storage, range)) = d.receive_window() {
                let n = range.len().min(chunk).min(stream.len() - pos);
                let dst = storage.window_ptr(range.start);
                // SAFETY: `n` bytes fit in the window, which nothing else reads yet.
                unsafe { std::ptr::copy_nonoverlapping(stream[pos..].as_ptr(), dst, n) };
                d.window_filled(n);
                pos += n;
            } else {
                let n = chunk.min(stream.len() - pos);
                d.feed(&stream[pos..pos + n]);
                pos += n;
            }
            while let Some((buf, range)) = d.next_frame_owned().unwrap() {
                got.push(buf[range].to_vec());
            }
        }
        got
    }

    #[test]
    fn large_frames_are_received_into_their_own_storage() {
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let bodies: Vec<Vec<u8>> = vec![
            b"small".to_vec(),
            big.clone(),
            vec![],
            big[..70_000].to_vec(),
            big[..1000].to_vec(),
            b"tail".to_vec(),
        ];
        let stream: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
        for chunk in [1usize, 3, 4096, 65_536, 250_000, stream.len()] {
            let mut d = FrameDecoder::with_direct_min(1 << 20, 1024);
            assert_eq!(receive_all(&mut d, &stream, chunk), bodies, "chunk {chunk}");
            assert_eq!(d.buffered(), 0);
            assert!(d.receive_window().is_none());
        }
        // Fed (not received into the window), the same frames come out too.
        let mut d = FrameDecoder::with_direct_min(1 << 20, 1024);
        let mut got = Vec::new();
        for piece in stream.chunks(777) {
            d.feed(piece);
            while let Some((buf, range)) = d.next_frame_owned().unwrap() {
                got.push(buf[range].to_vec());
            }
        }
        assert_eq!(got, bodies);
    }

    #[test]
    fn the_window_is_exactly_the_rest_of_the_frame() {
        let body = vec![7u8; 5000];
        let stream = frame(&body);
        let mut d = FrameDecoder::with_direct_min(1 << 20, 1024);
        d.feed(&stream[..10]);
        assert!(d.next_frame_owned().unwrap().is_none());
        let (storage, range) = d.receive_window().unwrap();
        assert_eq!(range, 6..5000);
        assert_eq!(storage.len(), 5000);
        assert_eq!(d.buffered(), 6);
        // A hostile size is still refused before anything is allocated.
        let mut d = FrameDecoder::with_direct_min(4096, 1024);
        d.feed(&(1_000_000i32).to_be_bytes());
        assert!(d.next_frame_owned().is_err());
        assert!(d.receive_window().is_none());
    }

    proptest! {
        #[test]
        fn direct_receiving_decodes_any_chunking_the_same(
            sizes in proptest::collection::vec(0usize..3000, 0..8),
            chunk in 1usize..5000,
            direct_min in 1usize..2000,
        ) {
            let bodies: Vec<Vec<u8>> = sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| (0..n).map(|j| (i * 31 + j) as u8).collect())
                .collect();
            let stream: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
            let mut d = FrameDecoder::with_direct_min(1 << 20, direct_min);
            prop_assert_eq!(receive_all(&mut d, &stream, chunk), bodies);
        }
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
