//! Storage for the big tables: zeroed words backed by transparent huge pages where the
//! system offers them, and a read-only table in such memory.
//!
//! Level: part of `solver::tables`; plain memory, depends on nothing in the crate.

/// A zeroed table of `words` u64, backed by transparent huge pages where the system
/// offers them (the pruning tables are read at random: 4 KiB pages would make nearly
/// every probe a TLB miss).
pub(crate) fn huge_zeroed(words: usize) -> Vec<u64> {
    let v = vec![0u64; words];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let p = v.as_ptr() as usize;
        let start = (p + HUGE - 1) & !(HUGE - 1);
        let end = (p + words * 8) & !(HUGE - 1);
        if end > start {
            // SAFETY: the range lies inside the allocation of `v`; MADV_HUGEPAGE only
            // changes how the kernel backs it, never its contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// A read-only table in memory aligned to 2 MiB and advised onto transparent huge pages:
/// the small tables are read at random too, and together they span more 4 KiB pages than
/// the TLB holds. Dereferences to a slice.
pub(crate) struct HugeTable<T: Copy> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: the table owns its memory and is never written after construction.
unsafe impl<T: Copy + Send> Send for HugeTable<T> {}
// SAFETY: as above; shared access is read-only.
unsafe impl<T: Copy + Sync> Sync for HugeTable<T> {}

impl<T: Copy> HugeTable<T> {
    pub fn from_vec(v: Vec<T>) -> HugeTable<T> {
        const HUGE: usize = 2 << 20;
        let bytes = (v.len() * std::mem::size_of::<T>())
            .max(1)
            .next_multiple_of(HUGE);
        let layout =
            std::alloc::Layout::from_size_align(bytes, HUGE.max(std::mem::align_of::<T>()))
                .expect("a table of at most a few MiB has a valid layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw as *mut T) else {
            std::alloc::handle_alloc_error(layout)
        };
        #[cfg(target_os = "linux")]
        // SAFETY: the range is exactly the allocation just made; MADV_HUGEPAGE only changes
        // how the kernel backs it.
        unsafe {
            libc::madvise(raw as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
        // SAFETY: the allocation holds at least `v.len()` values of T and does not overlap `v`.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), ptr.as_ptr(), v.len()) };
        HugeTable {
            ptr,
            len: v.len(),
            layout,
        }
    }
}

impl<T: Copy> HugeTable<T> {
    /// Bytes allocated (a multiple of 2 MiB).
    pub fn bytes(&self) -> usize {
        self.layout.size()
    }
}

impl<T: Copy> std::ops::Deref for HugeTable<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` values were initialised in `from_vec` and live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for HugeTable<T> {
    fn drop(&mut self) {
        // SAFETY: allocated in `from_vec` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, self.layout) }
    }
}
