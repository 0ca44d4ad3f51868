//! The consumer's position over a partition's decoded records, where it is not the decode's own
//! (`DecodeSummary::next_offset`): how far a deserializer failure lets it go, and how a run of
//! records handed out one at a time moves it. The PyO3 layer applies these to its Python objects
//! (`ConsumerRecord` lists, the fetch buffer, the partition's position).

use super::batch::{DecodeSummary, DecodedRecords};

/// What the consumer hands out when record `i`'s key or value deserializer fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAt {
    /// The first `records` records (those before the failed one), with `summary` in place of
    /// the decode's: its `next_offset` is the failed record's offset, so the next poll fetches
    /// that record again and fails there (the Java consumer's behaviour).
    HandOut {
        records: usize,
        summary: DecodeSummary,
    },
    /// Nothing comes before the failed record: the failure is raised, naming its `offset`.
    Raise { offset: i64 },
}

impl DecodedRecords {
    /// Where the records handed out stop when record `i` cannot be deserialized (see
    /// [`StopAt`]).
    pub fn stop_at(&self, i: usize) -> StopAt {
        let offset = self.offsets[i];
        if i == 0 {
            return StopAt::Raise { offset };
        }
        StopAt::HandOut {
            records: i,
            summary: DecodeSummary {
                next_offset: Some(offset),
                ..self.summary
            },
        }
    }
}

/// The counting of a run over one fetched response's records, handed out one at a time from
/// record `taken` on (the consumer's per-record path: `async for`, `getone`). A run hands out
/// every record but the response's last: the position after a whole response is the full
/// poll's rule (the decode's `next_offset` may lie past the last record), so that record goes
/// through the full poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunCursor {
    /// The first record of the run, the next one it hands out, and the one it stops before
    /// (the response's last).
    first: usize,
    taken: usize,
    last: usize,
}

impl RunCursor {
    /// A run over a response of `len` records of which `taken` were already handed out.
    pub fn new(len: usize, taken: usize) -> Self {
        RunCursor {
            first: taken,
            taken,
            last: len.saturating_sub(1),
        }
    }

    /// The index of the record the run hands out next, None when it has none to hand out.
    #[inline]
    pub fn next(&self) -> Option<usize> {
        (self.taken < self.last).then_some(self.taken)
    }

    /// The record [`RunCursor::next`] named was handed out.
    #[inline]
    pub fn advance(&mut self) {
        self.taken += 1;
    }

    /// How many records of the response were handed out, before the run and by it.
    pub fn taken(&self) -> usize {
        self.taken
    }

    /// How many records the run handed out.
    pub fn handed(&self) -> usize {
        self.taken - self.first
    }
}

/// The bytes `handed` records stand for, of a response of `raw_len` bytes holding `records`
/// records: the response's bytes shared evenly among its records (what the consumer's metrics
/// count as consumed).
pub fn bytes_of_records(raw_len: usize, handed: usize, records: usize) -> u64 {
    (raw_len as u128 * handed as u128 / records.max(1) as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(offsets: &[i64]) -> DecodedRecords {
        DecodedRecords {
            offsets: offsets.to_vec(),
            summary: DecodeSummary {
                next_offset: Some(100),
                last_leader_epoch: Some(3),
                batches: 2,
                skipped_control: 1,
                ..DecodeSummary::default()
            },
            ..DecodedRecords::default()
        }
    }

    #[test]
    fn a_failed_first_record_is_raised_at_its_offset() {
        assert_eq!(
            decoded(&[40, 41, 45]).stop_at(0),
            StopAt::Raise { offset: 40 }
        );
    }

    #[test]
    fn a_later_failure_hands_out_the_records_before_it_and_stops_the_position_at_it() {
        let d = decoded(&[40, 41, 45]);
        let StopAt::HandOut { records, summary } = d.stop_at(2) else {
            panic!("records before the failure are handed out");
        };
        assert_eq!(records, 2);
        assert_eq!(
            summary,
            DecodeSummary {
                next_offset: Some(45),
                ..d.summary
            }
        );
    }

    #[test]
    fn a_run_hands_out_all_but_the_last_record() {
        let mut run = RunCursor::new(4, 1);
        let mut out = Vec::new();
        while let Some(i) = run.next() {
            out.push(i);
            run.advance();
        }
        assert_eq!(out, [1, 2]);
        assert_eq!((run.taken(), run.handed()), (3, 2));
        for (len, taken) in [(0, 0), (1, 0), (3, 2), (3, 3)] {
            assert_eq!(RunCursor::new(len, taken).next(), None, "{len} {taken}");
        }
    }

    #[test]
    fn records_stand_for_their_share_of_the_response() {
        assert_eq!(bytes_of_records(1000, 0, 3), 0);
        assert_eq!(bytes_of_records(1000, 1, 3), 333);
        assert_eq!(bytes_of_records(1000, 2, 3), 666);
        assert_eq!(bytes_of_records(1000, 3, 3), 1000);
        // No overflow however large the response; no division by zero records.
        assert_eq!(
            bytes_of_records(usize::MAX, 2, 3),
            (usize::MAX as u128 * 2 / 3) as u64
        );
        assert_eq!(bytes_of_records(10, 0, 0), 0);
    }
}
