//! Golden bytes captured from a real Kafka broker (tools/capture_golden.py): requests written by
//! the Java client and by ferrokafka, and the broker's responses. Every frame must decode, and
//! re-encoding the decoded value must reproduce the captured bytes exactly.

use std::fs;
use std::path::PathBuf;

use super::{decode_request_body, decode_response, encode_request, encode_response, Api};
use crate::protocol::codec::Reader;
use crate::protocol::header::RequestHeader;
use crate::with_api;

/// `cargo test` names the checkout it runs in; the path compiled in is only the fallback (a
/// target directory shared by two checkouts can run a test binary built in the other).
fn golden_dir() -> PathBuf {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    root.join("tests/fixtures/golden")
}

/// (client, file stem, bytes) of every captured frame.
fn frames(kind: &str) -> Vec<(String, String, Vec<u8>)> {
    let mut out = Vec::new();
    for client in ["java", "ferrokafka"] {
        let dir = golden_dir().join(client);
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(&format!("-{kind}.bin")) {
                out.push((client.to_string(), name, fs::read(&path).unwrap()));
            }
        }
    }
    assert!(
        out.len() >= 10,
        "too few golden {kind} frames: {}",
        out.len()
    );
    out
}

fn reencode_request<A: Api>(frame: &[u8]) -> Vec<u8> {
    let mut r = Reader::new(frame);
    let header = RequestHeader::read_fixed(&mut r).unwrap();
    let body = decode_request_body::<A>(&mut r, header.api_version).unwrap();
    let out = encode_request::<A>(
        header.api_version,
        header.correlation_id,
        header.client_id.as_deref(),
        &body,
    )
    .unwrap();
    out[4..].to_vec()
}

fn reencode_response<A: Api>(version: i16, frame: &[u8]) -> Vec<u8> {
    let (corr, body) = decode_response::<A>(version, frame).unwrap();
    encode_response::<A>(version, corr, &body).unwrap()[4..].to_vec()
}

fn version_of(name: &str) -> i16 {
    let v = name.split("-v").nth(1).unwrap();
    v.split('-').next().unwrap().parse().unwrap()
}

#[test]
fn captured_requests_decode_and_reencode_identically() {
    for (client, name, frame) in frames("request") {
        let key = i16::from_be_bytes([frame[0], frame[1]]);
        let again =
            with_api!(key, A => reencode_request::<A>(&frame), else panic!("{name}: key {key}"));
        assert_eq!(again, frame, "{client}/{name}");
    }
}

#[test]
fn captured_responses_decode_and_reencode_identically() {
    for (client, name, frame) in frames("response") {
        let request_name = name.replace("-response", "-request");
        let request = fs::read(golden_dir().join(&client).join(request_name)).unwrap();
        let key = i16::from_be_bytes([request[0], request[1]]);
        let version = version_of(&name);
        let again =
            with_api!(key, A => reencode_response::<A>(version, &frame), else panic!("{name}"));
        assert_eq!(again, frame, "{client}/{name}");
    }
}
