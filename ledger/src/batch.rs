//! The batch: writes to several tables that the store applies atomically, and the form in which
//! the store, its read cache and its write-behind queue each walk through them.

/// One write of a [`Batch`], as the store applies it.
pub(crate) enum Write<'a> {
    Put { table: &'static str, key: &'a [u8], value: &'a [u8] },
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
}

impl Batch {
    /// An empty batch with room for about `bytes` bytes of keys and values (an append knows
    /// roughly how much its events take: growing the buffer as they are encoded costs more
    /// than encoding them).
    pub fn with_capacity(bytes: usize) -> Batch {
        Batch { ops: Vec::with_capacity(bytes / 128), bytes: Vec::with_capacity(bytes) }
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
    pub fn delete(&mut self, table: &'static str, key: impl AsRef<[u8]>) {
        self.push(OpKind::Delete, table, key.as_ref(), |_| {});
    }
    /// Remove every key of a table (a view being rebuilt).
    pub fn clear(&mut self, table: &'static str) {
        self.push(OpKind::Clear, table, &[], |_| {});
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// The bytes of keys and values held.
    pub(crate) fn bytes_len(&self) -> usize {
        self.bytes.len()
    }
    /// The batch's writes, in order.
    pub(crate) fn writes(&self) -> impl DoubleEndedIterator<Item = Write<'_>> {
        self.ops.iter().map(|op| {
            let key = &self.bytes[op.key.clone()];
            match op.kind {
                OpKind::Put => Write::Put { table: op.table, key, value: &self.bytes[op.value.clone()] },
                OpKind::Delete => Write::Delete { table: op.table, key },
                OpKind::Clear => Write::Clear { table: op.table },
            }
        })
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// The name of the batch type projections write with.
pub type ViewBatch = Batch;
