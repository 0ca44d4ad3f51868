"""Share-group acknowledgements (KIP-932): what a member says about each record it was given.

A member of a share group holds each record it was handed under a time-limited lock, and
answers for it by offset: ACCEPT (processed), RELEASE (give it to a member again, its delivery
count one higher), REJECT (never deliver it again: archived), RENEW (keep the lock longer,
KIP-1222). Offsets inside an acquired range that carry no record for the application (control
batches, aborted transactional data) are acknowledged as gaps, so that the broker does not
wait for their locks to expire.

On the wire a partition's acknowledgements are batches of consecutive offsets, each with one
type for all of its offsets or one type per offset; ``PartitionAcknowledgements.batches()``
makes few such batches: consecutive offsets of one type share a batch, and short stretches of
mixed types share one with a type per offset.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._native import AcknowledgementBatch

__all__ = ["GAP", "AcknowledgeType", "PartitionAcknowledgements"]

GAP = 0
"""The acknowledgement of an offset that holds no record for the application."""

_RENEW = 4  # AcknowledgeType.RENEW, below
_MAX_MIXED = 64
"""The most offsets a batch with a type per offset spans."""


class AcknowledgeType(enum.IntEnum):
    """How a share-group member answers for a record, as Java's ``AcknowledgeType``."""

    ACCEPT = 1
    """Processed: done with it."""
    RELEASE = 2
    """Not processed now: deliver it again (to any member), with a higher delivery count."""
    REJECT = 3
    """Unprocessable: archive it, never deliver it again."""
    RENEW = 4
    """Still being processed: extend its acquisition lock (KIP-1222)."""


class PartitionAcknowledgements:
    """One partition's acknowledgements not yet sent (the last one given for an offset wins):
    single offsets, as explicit acknowledgements come, and runs of offsets, as a poll's records
    are accepted in implicit mode (a run costs the same for one offset or a thousand)."""

    def __init__(self) -> None:
        self._types: dict[int, int] = {}
        self._renewing = 0
        """How many of ``_types`` are RENEW."""
        self._runs: list[tuple[int, int, int]] = []
        """``(first, last, type)``, disjoint from each other and from ``_types``."""
        self._runs_below = -1
        """No run reaches this offset or past it (a bound: runs carved since may end lower)."""

    def __len__(self) -> int:
        return len(self._types) + sum(last - first + 1 for first, last, _ in self._runs)

    def __bool__(self) -> bool:
        return bool(self._types) or bool(self._runs)

    def add(self, offset: int, type_: int) -> None:
        _check(offset, type_)
        self.add_checked(offset, int(type_))

    def add_checked(self, offset: int, type_: int) -> None:
        """``add`` of an offset and a type known to be valid (an int, not an enum)."""
        if self._runs:
            self._carve(offset, offset)
        old = self._types.get(offset)
        self._types[offset] = type_
        self._renewing += (type_ == _RENEW) - (old == _RENEW)

    def add_range(self, first: int, last: int, type_: int) -> None:
        """Every offset of ``first..=last``."""
        if last < first:
            raise ValueError(f"empty range {first}..{last}")
        _check(first, type_)
        type_ = int(type_)
        runs = self._runs
        if runs and first >= self._runs_below and not self._types:
            # After every run (a poll's records accepted in order, or getone's one by one):
            # nothing to carve, and a run that this one continues grows instead.
            lo, hi, t = runs[-1]
            if hi + 1 == first and t == type_:
                runs[-1] = (lo, last, t)
            else:
                runs.append((first, last, type_))
        else:
            self._carve(first, last)
            self._runs.append((first, last, type_))
        self._runs_below = max(self._runs_below, last + 1)

    def _carve(self, first: int, last: int) -> None:
        """Forget what was given for ``first..=last`` (a later word replaces it)."""
        if self._types:
            if last - first < len(self._types):
                gone = [self._types.pop(o, None) for o in range(first, last + 1)]
            else:
                gone = [self._types.pop(o) for o in [o for o in self._types if first <= o <= last]]
            self._renewing -= gone.count(_RENEW)
        if not self._runs:
            return
        kept: list[tuple[int, int, int]] = []
        for lo, hi, t in self._runs:
            if hi < first or lo > last:
                kept.append((lo, hi, t))
                continue
            if lo < first:
                kept.append((lo, first - 1, t))
            if hi > last:
                kept.append((last + 1, hi, t))
        self._runs = kept

    def has_renewals(self) -> bool:
        return self._renewing > 0 or any(t == _RENEW for _, _, t in self._runs)

    def batches(self, *, renewals: bool | None = None) -> list[AcknowledgementBatch]:
        """The pending acknowledgements as wire batches, offsets ascending: one batch per run of
        consecutive offsets, with a single type when the run has one, else a type per offset.
        ``renewals=True``: only the RENEWs; ``False``: all but them (a request either renews
        locks or settles records, KIP-1222); None: all."""
        singles = self._types
        if not self._runs and singles and renewals is None:
            # One answer for a whole poll's records, in order: one batch.
            low, high = min(singles), max(singles)
            kinds = set(singles.values())
            if high - low + 1 == len(singles) and len(kinds) == 1:
                return [{"first_offset": low, "last_offset": high, "acknowledge_types": [*kinds]}]
        segments = [(first, last, t) for first, last, t in self._runs if _wanted(t, renewals)]
        segments += [(o, o, t) for o, t in singles.items() if _wanted(t, renewals)]
        segments.sort()
        out: list[AcknowledgementBatch] = []
        for first, last, t in segments:
            if out and out[-1]["last_offset"] + 1 == first:
                batch = out[-1]
                types = batch["acknowledge_types"]
                if len(types) == 1 and types[0] == t:
                    batch["last_offset"] = last
                    continue
                if last - batch["first_offset"] >= _MAX_MIXED:
                    # A type per offset costs a byte each: long runs stay batches of their own.
                    out.append(
                        {"first_offset": first, "last_offset": last, "acknowledge_types": [t]}
                    )
                    continue
                if len(types) == 1:
                    types *= batch["last_offset"] - batch["first_offset"] + 1
                types.extend([t] * (last - first + 1))
                batch["last_offset"] = last
                continue
            out.append({"first_offset": first, "last_offset": last, "acknowledge_types": [t]})
        return out

    def take(self, *, renewals: bool | None = None) -> list[AcknowledgementBatch]:
        """``batches(renewals=)``, and forget them (they are on their way)."""
        if renewals is not None and not self.has_renewals():
            if renewals:
                return []
            renewals = None
        out = self.batches(renewals=renewals)
        if renewals is None:
            self._types.clear()
            self._runs.clear()
            self._runs_below = -1
            self._renewing = 0
        else:
            self._types = {o: t for o, t in self._types.items() if not _wanted(t, renewals)}
            self._renewing = 0 if renewals else self._renewing
            self._runs = [r for r in self._runs if not _wanted(r[2], renewals)]
        return out


def _check(offset: int, type_: int) -> None:
    if not GAP <= type_ <= AcknowledgeType.RENEW:
        raise ValueError(f"acknowledge type must be 0-4, got {type_!r}")
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")


def _wanted(type_: int, renewals: bool | None) -> bool:
    return renewals is None or (type_ == AcknowledgeType.RENEW) == renewals
