//! The plugin's heap: the host runs every call on a fresh instance that lives for one call
//! (and the contribution and view asked right after it), so most of what a call allocates is
//! small and dies with the instance. Such allocations are taken from an arena by moving a
//! pointer, and handed back only when they are the last one taken (a temporary freed right
//! away, a string grown in place); the rest is left for the instance's end to reclaim. A call
//! that allocates more than the arena holds, and every large block, goes to the system
//! allocator (wasi-libc's), which frees and reuses as ever: what the arena cannot reclaim is
//! bounded by its size.
//!
//! On by default (the `instance-heap` feature); a plugin that brings its own
//! `#[global_allocator]` turns the SDK's default features off.

use std::alloc::Layout;

/// Blocks this large or larger go to the system allocator, which can reuse them once freed.
pub(crate) const LARGE_BYTES: usize = 32 << 10;

/// A bump arena over `[base, base + capacity)`; its offsets, not its memory.
#[derive(Debug)]
pub(crate) struct Arena {
    base: usize,
    capacity: usize,
    /// The offset of the first free byte.
    next: usize,
}

impl Arena {
    pub(crate) const fn new(base: usize, capacity: usize) -> Self {
        Self { base, capacity, next: 0 }
    }

    /// Takes a block for `layout`, or `None` when it is large or does not fit.
    pub(crate) fn alloc(&mut self, layout: Layout) -> Option<usize> {
        if layout.size() >= LARGE_BYTES {
            return None;
        }
        // A layout's alignment is a power of two.
        let mask = layout.align() - 1;
        let start = (self.base + self.next).checked_add(mask)? & !mask;
        let end = start.checked_add(layout.size())?;
        if end > self.base + self.capacity {
            return None;
        }
        self.next = end - self.base;
        Some(start)
    }

    /// Whether `address` lies in the arena (and so is not the system allocator's).
    pub(crate) fn holds(&self, address: usize) -> bool {
        address.wrapping_sub(self.base) < self.capacity
    }

    /// Hands back the block at `address` of `size` bytes: reused only when it is the last
    /// block taken.
    pub(crate) fn free(&mut self, address: usize, size: usize) {
        if address + size == self.base + self.next {
            self.next = address - self.base;
        }
    }

    /// Resizes the block at `address` from `size` to `new_size` where it stands: always when
    /// it shrinks, and when it grows only if it is the last block taken and the arena has
    /// room (and the block stays small).
    pub(crate) fn resize_in_place(&mut self, address: usize, size: usize, new_size: usize) -> bool {
        if new_size <= size {
            self.free(address + new_size, size - new_size);
            return true;
        }
        let is_last = address + size == self.base + self.next;
        let fits = address + new_size <= self.base + self.capacity;
        if is_last && fits && new_size < LARGE_BYTES {
            self.next = address + new_size - self.base;
            true
        } else {
            false
        }
    }
}

#[cfg(all(target_arch = "wasm32", feature = "instance-heap"))]
mod global {
    // A global allocator cannot be written without `unsafe`: it hands out raw memory.
    #![allow(unsafe_code)]

    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::UnsafeCell;

    use super::Arena;

    /// What the arena holds.
    const ARENA_BYTES: usize = 512 << 10;

    #[repr(C, align(16))]
    struct Bytes([u8; ARENA_BYTES]);

    /// The arena's memory (zeroed, so it takes no room in the component) and its offsets.
    struct InstanceHeap {
        bytes: UnsafeCell<Bytes>,
        arena: UnsafeCell<Option<Arena>>,
    }

    // SAFETY: a wasm32-wasip2 instance runs one thread; nothing here is reached from another.
    unsafe impl Sync for InstanceHeap {}

    impl InstanceHeap {
        #[allow(clippy::mut_from_ref)]
        fn arena(&self) -> &mut Arena {
            // SAFETY: one thread, and no caller holds the reference across another call here.
            let arena = unsafe { &mut *self.arena.get() };
            arena.get_or_insert_with(|| Arena::new(self.bytes.get() as usize, ARENA_BYTES))
        }
    }

    // Each method is called from every allocation site: inlined there, they grew the code by
    // half.
    // SAFETY: every block handed out is either the arena's, inside `bytes` and aligned as
    // asked, never handed out twice while live; or the system allocator's, returned to it.
    unsafe impl GlobalAlloc for InstanceHeap {
        #[inline(never)]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            match self.arena().alloc(layout) {
                Some(address) => address as *mut u8,
                // SAFETY: the caller's contract, passed on.
                None => unsafe { System.alloc(layout) },
            }
        }

        #[inline(never)]
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            let arena = self.arena();
            if arena.holds(ptr as usize) {
                arena.free(ptr as usize, layout.size());
            } else {
                // SAFETY: not the arena's, so the system allocator's.
                unsafe { System.dealloc(ptr, layout) }
            }
        }

        #[inline(never)]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let arena = self.arena();
            if !arena.holds(ptr as usize) {
                // SAFETY: the system allocator's block, resized by it.
                return unsafe { System.realloc(ptr, layout, new_size) };
            }
            if arena.resize_in_place(ptr as usize, layout.size(), new_size) {
                return ptr;
            }
            // SAFETY: `realloc`'s contract makes this layout valid.
            let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            // SAFETY: as `alloc`.
            let moved = unsafe { self.alloc(new_layout) };
            if !moved.is_null() {
                // SAFETY: both blocks are live, distinct, and at least this long.
                unsafe { std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size)) };
                self.arena().free(ptr as usize, layout.size());
            }
            moved
        }
    }

    #[global_allocator]
    static HEAP: InstanceHeap =
        InstanceHeap { bytes: UnsafeCell::new(Bytes([0; ARENA_BYTES])), arena: UnsafeCell::new(None) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_apart_and_inside() {
        let mut arena = Arena::new(1000, 4096);
        let a = arena.alloc(layout(3, 1)).unwrap();
        let b = arena.alloc(layout(8, 8)).unwrap();
        let c = arena.alloc(layout(16, 16)).unwrap();
        assert_eq!((a, b, c), (1000, 1008, 1024));
        assert!(arena.holds(a) && arena.holds(1000 + 4095));
        assert!(!arena.holds(999) && !arena.holds(1000 + 4096));
    }

    #[test]
    fn a_full_arena_and_a_large_block_go_elsewhere() {
        let mut arena = Arena::new(0, 4096);
        assert_eq!(arena.alloc(layout(4000, 8)), Some(0));
        assert_eq!(arena.alloc(layout(100, 8)), None, "does not fit");
        assert_eq!(arena.alloc(layout(96, 8)), Some(4000), "what is left still serves");
        let mut roomy = Arena::new(0, 1 << 20);
        assert_eq!(roomy.alloc(layout(LARGE_BYTES, 8)), None);
        assert_eq!(roomy.alloc(layout(LARGE_BYTES - 1, 8)), Some(0));
    }

    #[test]
    fn only_the_last_block_is_taken_back() {
        let mut arena = Arena::new(0, 4096);
        let a = arena.alloc(layout(64, 8)).unwrap();
        let b = arena.alloc(layout(64, 8)).unwrap();
        arena.free(a, 64);
        assert_eq!(arena.alloc(layout(8, 8)), Some(128), "a freed block below the last stays taken");
        arena.free(128, 8);
        arena.free(b, 64);
        assert_eq!(arena.alloc(layout(8, 8)), Some(64), "the last block is taken back");
    }

    #[test]
    fn the_last_block_grows_in_place_and_any_block_shrinks() {
        let mut arena = Arena::new(0, 4096);
        let a = arena.alloc(layout(16, 8)).unwrap();
        assert!(arena.resize_in_place(a, 16, 1024));
        assert_eq!(arena.alloc(layout(8, 8)), Some(1024), "the grown block is kept");
        assert!(!arena.resize_in_place(a, 1024, 2048), "no longer the last");
        assert!(arena.resize_in_place(1024, 8, 4));
        assert_eq!(arena.alloc(layout(4, 4)), Some(1028), "the shrunk tail is taken back");
        assert!(!arena.resize_in_place(1028, 4, 8192), "past the arena's end");
        let mut roomy = Arena::new(0, 1 << 20);
        let b = roomy.alloc(layout(16, 8)).unwrap();
        assert!(!roomy.resize_in_place(b, 16, LARGE_BYTES), "a block grown large moves out");
        assert!(roomy.resize_in_place(b, 16, LARGE_BYTES - 1));
    }
}
