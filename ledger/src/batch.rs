//! The batch: writes to several tables that the store applies atomically, and the form in which
//! the store, its read cache and its write-behind queue each walk through them.

use std::sync::OnceLock;

/// One write of a [`Batch`], as the store applies it.
pub(crate) enum Write<'a> {
    Put { table: &'static str, key: &'a [u8], value: Value<'a> },
    Delete { table: &'static str, key: &'a [u8] },
    Clear { table: &'static str },
}

impl Write<'_> {
    pub(crate) fn table(&self) -> &'static str {
        match self {
            Write::Put { table, .. } | Write::Delete { table, .. } | Write::Clear { table } => table,
        }
    }
}

/// The value of a put: held by the batch, or made when first needed ([`Batch::put_vouching`]).
#[derive(Clone, Copy)]
pub(crate) enum Value<'a> {
    Held(&'a [u8]),
    Later(&'a Later),
}

impl<'a> Value<'a> {
    /// The value's bytes; a later value is made here if no one has made it yet.
    pub(crate) fn bytes(self) -> &'a [u8] {
        match self {
            Value::Held(bytes) => bytes,
            Value::Later(later) => later.value.get_or_init(|| (later.make)()),
        }
    }
}

/// A put whose value is made by whoever first needs it: the thread that writes the batch to
/// RocksDB (the write-behind writer, for an unsynced batch), or a read that finds the batch
/// still queued ([`Batch::put_vouching`]). The thread that made the batch goes on without
/// waiting for it.
pub(crate) struct Later {
    table: &'static str,
    key: Vec<u8>,
    make: Box<dyn Fn() -> Vec<u8> + Send + Sync>,
    value: OnceLock<Vec<u8>>,
}

impl Later {
    /// Whether a write of the batch may leave it out: a later batch of the same atomic write
    /// vouches for more (`vouched_after`), and no one has asked for this one.
    pub(crate) fn may_skip(&self, vouched_after: bool) -> bool {
        vouched_after && self.value.get().is_none()
    }
}

#[derive(Clone, Copy)]
enum OpKind {
    Put,
    Delete,
    Clear,
}

/// One write of a [`Batch`]: its key and value are ranges of the batch's byte buffer.
struct Op {
    kind: OpKind,
    table: &'static str,
    key: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

/// Writes to several tables, applied atomically by the store's `write`. Keys and values are
/// copied into one growing buffer (a save writes dozens of small keys: one allocation, not two each).
#[derive(Default)]
pub struct Batch {
    ops: Vec<Op>,
    bytes: Vec<u8>,
    /// Applied after every write of `ops`.
    later: Vec<Later>,
}

impl Batch {
    /// An empty batch with room for about `bytes` bytes of keys and values (an append knows
    /// roughly how much its events take: growing the buffer as they are encoded costs more
    /// than encoding them).
    pub fn with_capacity(bytes: usize) -> Batch {
        Batch { ops: Vec::with_capacity(bytes / 128), bytes: Vec::with_capacity(bytes), later: Vec::new() }
    }

    fn push(&mut self, kind: OpKind, table: &'static str, key: &[u8], value: impl FnOnce(&mut Vec<u8>)) {
        let key_start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        let value_start = self.bytes.len();
        value(&mut self.bytes);
        let key = key_start..value_start;
        let value = value_start..self.bytes.len();
        self.ops.push(Op { kind, table, key, value });
    }
    pub fn put(&mut self, table: &'static str, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.push(OpKind::Put, table, key.as_ref(), |out| out.extend_from_slice(value.as_ref()));
    }
    /// Put a value written straight into the batch by `write_value` (an encoder appending to
    /// the buffer it is given), without a buffer of its own.
    pub fn put_with(&mut self, table: &'static str, key: impl AsRef<[u8]>, write_value: impl FnOnce(&mut Vec<u8>)) {
        self.push(OpKind::Put, table, key.as_ref(), write_value);
    }
    /// Put a value that vouches for every write before it (the signature of a checkpoint, over
    /// the chain's head), made by `make` when it is first needed ([`Later`]), after the batch's
    /// other writes. When the store writes several batches as one atomic write, the last batch's
    /// value vouches for them all: an earlier batch's is written only if a read made it before
    /// the write was put together (a read racing the write may get a value that is never
    /// stored: still a true signature of that head).
    pub fn put_vouching(
        &mut self,
        table: &'static str,
        key: impl Into<Vec<u8>>,
        make: impl Fn() -> Vec<u8> + Send + Sync + 'static,
    ) {
        self.later.push(Later { table, key: key.into(), make: Box::new(make), value: OnceLock::new() });
    }
    /// Whether the batch holds a value that vouches for its writes ([`Batch::put_vouching`]).
    pub(crate) fn vouches(&self) -> bool {
        !self.later.is_empty()
    }
    pub fn delete(&mut self, table: &'static str, key: impl AsRef<[u8]>) {
        self.push(OpKind::Delete, table, key.as_ref(), |_| {});
    }
    /// Remove every key of a table (a view being rebuilt).
    pub fn clear(&mut self, table: &'static str) {
        self.push(OpKind::Clear, table, &[], |_| {});
    }
    pub fn len(&self) -> usize {
        self.ops.len() + self.later.len()
    }
    /// The bytes of keys and values held (a later value counted as 128).
    pub(crate) fn bytes_len(&self) -> usize {
        self.bytes.len() + self.later.iter().map(|l| l.key.len() + 128).sum::<usize>()
    }
    /// The batch's writes, in order.
    pub(crate) fn writes(&self) -> impl DoubleEndedIterator<Item = Write<'_>> {
        let held = self.ops.iter().map(|op| {
            let key = &self.bytes[op.key.clone()];
            match op.kind {
                OpKind::Put => Write::Put { table: op.table, key, value: Value::Held(&self.bytes[op.value.clone()]) },
                OpKind::Delete => Write::Delete { table: op.table, key },
                OpKind::Clear => Write::Clear { table: op.table },
            }
        });
        let later = self.later.iter().map(|l| Write::Put { table: l.table, key: &l.key, value: Value::Later(l) });
        held.chain(later)
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.later.is_empty()
    }
}

/// The name of the batch type projections write with.
pub type ViewBatch = Batch;
