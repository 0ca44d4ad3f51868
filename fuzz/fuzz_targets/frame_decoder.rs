//! Arbitrary bytes, fed in arbitrary chunks, through the frame splitter: exactly the frames (or
//! the error) that splitting the whole stream at once gives; never a panic, never a frame above
//! the limit, and a failed decoder stays failed. The same again with direct receiving, where
//! large frames are written into the decoder's receive window instead of fed.
//!
//! Input: byte 0 = n; the next `n % 8 + 1` bytes are chunk sizes (0 taken
//! as 1), used in turn; the rest is the
//! stream.
#![no_main]
use _native::protocol::frame::FrameDecoder;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

/// Split the whole stream in one go: the frames, and whether a bad size prefix ends it.
fn reference(mut stream: &[u8]) -> (Vec<&[u8]>, bool) {
    let mut frames = Vec::new();
    while stream.len() >= 4 {
        let size = i32::from_be_bytes([stream[0], stream[1], stream[2], stream[3]]);
        if size < 0 || size as usize > LIMIT {
            return (frames, true);
        }
        let Some(body) = stream.get(4..4 + size as usize) else {
            break;
        };
        frames.push(body);
        stream = &stream[4 + size as usize..];
    }
    (frames, false)
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 8) + 1;
    if rest.len() < n {
        return;
    }
    let (sizes, stream) = rest.split_at(n);

    let mut decoder = FrameDecoder::new(LIMIT);
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut failed = false;
    let mut fed = 0;
    let mut i = 0;
    'feed: while fed < stream.len() {
        let chunk = usize::from(sizes[i % sizes.len()])
            .max(1)
            .min(stream.len() - fed);
        i += 1;
        decoder.feed(&stream[fed..fed + chunk]);
        fed += chunk;
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= LIMIT);
                    frames.push(frame.to_vec());
                }
                Ok(None) => break,
                Err(_) => {
                    failed = true;
                    break 'feed;
                }
            }
        }
    }
    if failed {
        decoder.feed(&[0, 0, 0, 0]);
        assert!(decoder.next_frame().is_err(), "a failed decoder recovered");
    }

    let (want, want_failed) = reference(stream);
    assert_eq!(failed, want_failed);
    assert_eq!(frames, want);
    if !failed {
        let consumed: usize = frames.iter().map(|f| 4 + f.len()).sum();
        assert_eq!(decoder.buffered(), stream.len() - consumed);
    }

    let direct_min = usize::from(sizes[0]) * 4 + 1;
    let (direct_frames, direct_failed) = receive_direct(stream, sizes, direct_min);
    assert_eq!(direct_failed, want_failed);
    assert_eq!(direct_frames, want);
});

/// Deliver `stream` as a buffered protocol does: into the receive window when there is one.
fn receive_direct(stream: &[u8], sizes: &[u8], direct_min: usize) -> (Vec<Vec<u8>>, bool) {
    let mut decoder = FrameDecoder::with_direct_min(LIMIT, direct_min);
    let mut frames = Vec::new();
    let mut fed = 0;
    let mut i = 0;
    while fed < stream.len() {
        let mut chunk = usize::from(sizes[i % sizes.len()])
            .max(1)
            .min(stream.len() - fed);
        i += 1;
        if let Some((storage, range)) = decoder.receive_window() {
            assert!(!range.is_empty() && range.end == storage.len());
            chunk = chunk.min(range.len());
            let dst = storage.window_ptr(range.start);
            // SAFETY: `chunk` bytes fit in the window, which nothing reads yet.
            unsafe { std::ptr::copy_nonoverlapping(stream[fed..].as_ptr(), dst, chunk) };
            decoder.window_filled(chunk);
        } else {
            decoder.feed(&stream[fed..fed + chunk]);
        }
        fed += chunk;
        loop {
            match decoder.next_frame_owned() {
                Ok(Some((storage, range))) => {
                    assert!(range.len() <= LIMIT);
                    frames.push(storage[range].to_vec());
                }
                Ok(None) => break,
                Err(_) => return (frames, true),
            }
        }
    }
    (frames, false)
}
