//! The producer's open batches: for each topic, the batch of each partition that is taking
//! records, and the topic's sticky partition (KIP-480). The accumulator writes a batch in when
//! it opens one (the only writer); `send()`'s shortcuts append to it from here (a record with
//! no partition, timestamp or headers goes into its partition's open batch in one native
//! call), and the sticky partitioner keeps its choice here. The accumulator's own appends take
//! the same batch from its queue, whose last batch this is.

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3::PyTraverseError;

use super::gil_cell::GilCell;
use super::producer::{BatchRecords, RecordFuture};
use crate::records::sizes::{fits_request, record_bound};

/// One topic's open batches, by partition. Frozen, its state in a `GilCell`: read on every
/// `send()`, where a PyO3 borrow would cost two locked instructions.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct TopicBatches {
    table: GilCell<Table>,
}

/// A `TopicBatches`' state.
struct Table {
    /// The open batch of each partition (None: none open, or not known).
    open: Vec<Option<Py<BatchRecords>>>,
    /// The topic's partition count as the default partitioner last saw it (0: not known since
    /// the metadata changed): keyed records go to murmur2(key) modulo this.
    partitions: usize,
    sticky: Option<usize>,
}

impl TopicBatches {
    fn new() -> Self {
        TopicBatches {
            table: GilCell::new(Table {
                open: Vec::new(),
                partitions: 0,
                sticky: None,
            }),
        }
    }

    fn table<'a>(&'a self, py: Python<'_>) -> PyResult<std::cell::RefMut<'a, Table>> {
        self.table.borrow_mut(py)
    }
}

impl Table {
    fn grow(&mut self, partition: usize) {
        if partition >= self.open.len() {
            self.open.resize_with(partition + 1, || None);
        }
    }

    /// The open batch records for `partition` may go into now.
    fn usable<'py>(&self, py: Python<'py>, partition: usize) -> Option<Bound<'py, BatchRecords>> {
        self.open
            .get(partition)?
            .as_ref()
            .map(|b| b.bind(py).clone())
    }
}

#[pymethods]
impl TopicBatches {
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(table) = self.table.try_borrow_in_gc() else {
            return Ok(()); // borrowed: in the middle of a call, which holds what it uses
        };
        for batch in table.open.iter().flatten() {
            visit.call(batch)?;
        }
        Ok(())
    }

    fn __clear__(&self, py: Python<'_>) {
        if let Ok(mut table) = self.table.borrow_mut(py) {
            table.open.clear();
        }
    }
}

/// The open batches of a producer's topics (see the module's documentation). A record takes a
/// shortcut only into the batch the full path would append it to, and only when it is small
/// enough (`max_request_size`) that the full path would not have refused it. Frozen (its one
/// changing field is atomic): every `send()` reads it.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct OpenBatches {
    topics: Py<PyDict>,
    max_request_size: usize,
    /// Closed: the producer is stopping or failed, and every record takes the full path
    /// (which raises).
    closed: AtomicBool,
}

impl OpenBatches {
    fn topic<'py>(
        &self,
        py: Python<'py>,
        topic: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, TopicBatches>>> {
        match self.topics.bind(py).get_item(topic)? {
            Some(t) => Ok(Some(t.cast_into::<TopicBatches>()?)),
            None => Ok(None),
        }
    }

    fn topic_or_new<'py>(
        &self,
        py: Python<'py>,
        topic: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, TopicBatches>> {
        if let Some(t) = self.topic(py, topic)? {
            return Ok(t);
        }
        let t = Bound::new(py, TopicBatches::new())?;
        self.topics.bind(py).set_item(topic, &t)?;
        Ok(t)
    }

    fn fits(&self, key: Option<&[u8]>, value: Option<&[u8]>) -> bool {
        let bound = record_bound(
            key.map(<[u8]>::len),
            value.map(<[u8]>::len),
            std::iter::empty(),
        );
        fits_request(bound, self.max_request_size)
    }
}

#[pymethods]
impl OpenBatches {
    #[new]
    fn new(py: Python<'_>, max_request_size: usize) -> Self {
        OpenBatches {
            topics: PyDict::new(py).unbind(),
            max_request_size,
            closed: AtomicBool::new(false),
        }
    }

    /// `records` is `topic`'s `partition`'s open batch from now on.
    fn opened(
        &self,
        py: Python<'_>,
        topic: &Bound<'_, PyAny>,
        partition: usize,
        records: Py<BatchRecords>,
    ) -> PyResult<()> {
        if self.closed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let t = self.topic_or_new(py, topic)?;
        let mut t = t.get().table(py)?;
        t.grow(partition);
        t.open[partition] = Some(records);
        Ok(())
    }

    /// The default partitioner sees `partitions` partitions in `topic`: keyed records may take
    /// the shortcut, to murmur2(key) modulo that.
    fn partition_count(
        &self,
        py: Python<'_>,
        topic: &Bound<'_, PyAny>,
        partitions: usize,
    ) -> PyResult<()> {
        self.topic_or_new(py, topic)?.get().table(py)?.partitions = partitions;
        Ok(())
    }

    /// `topic`'s sticky partition, if one was chosen.
    fn sticky(&self, py: Python<'_>, topic: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        match self.topic(py, topic)? {
            Some(t) => Ok(t.get().table(py)?.sticky),
            None => Ok(None),
        }
    }

    fn stick(&self, py: Python<'_>, topic: &Bound<'_, PyAny>, partition: usize) -> PyResult<()> {
        self.topic_or_new(py, topic)?.get().table(py)?.sticky = Some(partition);
        Ok(())
    }

    /// The metadata changed: the partition counts and sticky partitions were chosen under the
    /// old one, so the shortcuts wait until the full path has looked at the new one (the open
    /// batches stay: they are still the partitions' batches).
    fn metadata_changed(&self, py: Python<'_>) -> PyResult<()> {
        for (_, t) in self.topics.bind(py).iter() {
            let t = t.cast_into::<TopicBatches>()?;
            t.get().table(py)?.partitions = 0;
        }
        Ok(())
    }

    /// Forget every batch and take no more (the producer is stopping, or failed).
    fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Relaxed);
        self.topics.bind(py).clear();
    }

    /// An unkeyed `bytes` value to the open batch of `topic`'s sticky partition: its future,
    /// or None (take the full path).
    pub(super) fn send(
        &self,
        py: Python<'_>,
        topic: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<RecordFuture>>> {
        let Ok(value) = value.cast_exact::<PyBytes>() else {
            return Ok(None);
        };
        let value = value.as_bytes();
        if !self.fits(None, Some(value)) {
            return Ok(None);
        }
        let Some(t) = self.topic(py, topic)? else {
            return Ok(None);
        };
        let records = {
            let t = t.get().table(py)?;
            match t.sticky {
                Some(p) if p < t.partitions => t.usable(py, p),
                _ => None,
            }
        };
        match records {
            Some(records) => BatchRecords::append_now(&records, None, Some(value)),
            None => Ok(None),
        }
    }

    /// A `bytes` key and `bytes` or None value to the open batch of the key's partition under
    /// the default partitioner: its future, or None (take the full path).
    pub(super) fn send_keyed(
        &self,
        py: Python<'_>,
        topic: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<RecordFuture>>> {
        let Ok(key) = key.cast_exact::<PyBytes>() else {
            return Ok(None);
        };
        let key = key.as_bytes();
        let value = if value.is_none() {
            None
        } else if let Ok(v) = value.cast_exact::<PyBytes>() {
            Some(v.as_bytes())
        } else {
            return Ok(None);
        };
        if !self.fits(Some(key), value) {
            return Ok(None);
        }
        let Some(t) = self.topic(py, topic)? else {
            return Ok(None);
        };
        let records = {
            let t = t.get().table(py)?;
            if t.partitions == 0 {
                return Ok(None);
            }
            t.usable(py, crate::hash::partition_for_key(key, t.partitions))
        };
        match records {
            Some(records) => BatchRecords::append_now(&records, Some(key), value),
            None => Ok(None),
        }
    }

    // No __clear__: the dict's own clears the table when the collector breaks a cycle.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.topics)
    }
}
