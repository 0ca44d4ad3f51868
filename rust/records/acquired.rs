//! Which of a share fetch's records a member holds (KIP-932).
//!
//! A ShareFetch answers a partition with record batches and, apart, the offset ranges the member
//! has just acquired, each with its delivery count. Records outside those ranges are not the
//! member's (another holds them, or they were acknowledged already); offsets inside a range
//! that carry no record for the application (control batches, aborted transactional data,
//! compacted-away offsets) must still be answered for, as gaps. Gaps and held offsets come out
//! as runs of consecutive offsets, so that a broker's wide range costs a run, not an offset each.

/// One acquired range: first and last offset (inclusive) and the delivery count of its records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcquiredRange {
    pub first: i64,
    pub last: i64,
    pub delivery_count: u16,
}

/// What [`split_acquired`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AcquiredSplit {
    /// `(start, end, delivery count)`: the records at indexes `start..end` are held, each
    /// delivered that many times.
    pub spans: Vec<(usize, usize, u16)>,
    /// The held records' offsets as runs of consecutive offsets `(first, last)`, ascending.
    pub held: Vec<(i64, i64)>,
    /// Acquired offsets without a record, as runs `(first, last)`, ascending.
    pub gaps: Vec<(i64, i64)>,
}

/// Split `offsets` (one partition's decoded records, ascending) by `acquired` (any order;
/// ranges whose last offset is below their first are ignored, and a range overlapping an
/// earlier one is taken from where the earlier one ended).
pub fn split_acquired(offsets: &[i64], acquired: &[AcquiredRange]) -> AcquiredSplit {
    let mut ranges: Vec<AcquiredRange> = acquired
        .iter()
        .copied()
        .filter(|r| r.last >= r.first)
        .collect();
    ranges.sort_by_key(|r| (r.first, r.last));
    let mut out = AcquiredSplit::default();
    let mut i = 0;
    // The first offset not yet covered by an earlier range.
    let mut covered_to: Option<i64> = None;
    for r in ranges {
        let first = match covered_to {
            Some(end) if end > r.last => continue,
            Some(end) if end > r.first => end,
            _ => r.first,
        };
        while i < offsets.len() && offsets[i] < first {
            i += 1;
        }
        let start = i;
        let mut expected = first;
        while i < offsets.len() && offsets[i] <= r.last {
            let offset = offsets[i];
            if offset > expected {
                push_run(&mut out.gaps, expected, offset - 1);
            }
            if offset >= expected {
                push_run(&mut out.held, offset, offset);
                expected = offset + 1;
            }
            i += 1;
        }
        if expected <= r.last {
            push_run(&mut out.gaps, expected, r.last);
        }
        if i > start {
            out.spans.push((start, i, r.delivery_count));
        }
        covered_to = r.last.checked_add(1).or(Some(i64::MAX));
    }
    out
}

/// Append `first..=last`, merged into the last run when it follows on.
fn push_run(runs: &mut Vec<(i64, i64)>, first: i64, last: i64) {
    if let Some(prev) = runs.last_mut() {
        if prev.1.checked_add(1) == Some(first) {
            prev.1 = last;
            return;
        }
    }
    runs.push((first, last));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: i64, last: i64, delivery_count: u16) -> AcquiredRange {
        AcquiredRange {
            first,
            last,
            delivery_count,
        }
    }

    #[test]
    fn whole_batch_held() {
        let offsets: Vec<i64> = (100..110).collect();
        let split = split_acquired(&offsets, &[range(100, 109, 1)]);
        assert_eq!(split.spans, vec![(0, 10, 1)]);
        assert_eq!(split.held, vec![(100, 109)]);
        assert!(split.gaps.is_empty());
    }

    #[test]
    fn records_outside_the_ranges_are_not_held_and_gaps_are_runs() {
        // 100-101 another member's; 102-104 once, 105-107 a third time; 108-109 not acquired.
        let offsets: Vec<i64> = (100..110).collect();
        let split = split_acquired(&offsets, &[range(105, 107, 3), range(102, 104, 1)]);
        assert_eq!(split.spans, vec![(2, 5, 1), (5, 8, 3)]);
        assert_eq!(split.held, vec![(102, 107)]);
        assert!(split.gaps.is_empty());
        // A control record at 3 and aborted data at 6-8 inside one range.
        let split = split_acquired(&[0, 1, 2, 4, 5, 9], &[range(0, 12, 2)]);
        assert_eq!(split.spans, vec![(0, 6, 2)]);
        assert_eq!(split.held, vec![(0, 2), (4, 5), (9, 9)]);
        assert_eq!(split.gaps, vec![(3, 3), (6, 8), (10, 12)]);
    }

    #[test]
    fn hostile_ranges_cost_runs_not_offsets() {
        let split = split_acquired(&[5], &[range(0, i64::MAX, 1), range(-3, -9, 1)]);
        assert_eq!(split.held, vec![(5, 5)]);
        assert_eq!(split.gaps, vec![(0, 4), (6, i64::MAX)]);
        // Overlapping ranges: each offset once.
        let split = split_acquired(&[1, 2, 3], &[range(0, 2, 1), range(1, 3, 2)]);
        assert_eq!(split.spans, vec![(0, 2, 1), (2, 3, 2)]);
        assert_eq!(split.held, vec![(1, 3)]);
        assert_eq!(split.gaps, vec![(0, 0)]);
        // Nothing acquired, or no records.
        assert_eq!(split_acquired(&[1, 2], &[]), AcquiredSplit::default());
        let split = split_acquired(&[], &[range(7, 9, 1)]);
        assert_eq!((split.spans.len(), split.gaps), (0, vec![(7, 9)]));
    }
}
