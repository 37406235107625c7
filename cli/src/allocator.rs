//! The binary's allocator (and its benches'): mimalloc, asked the way malloc is asked whenever
//! the layout allows.
//!
//! The `mimalloc` crate enters every allocation through mimalloc's aligned functions, which
//! check the alignment and then take the same small-block path `mi_malloc` takes, one call
//! deeper; most of a round trip's allocations are small and need no more alignment than any
//! block already has. `mi_malloc` aligns a block as C's `malloc` must: to 16 bytes
//! (`MI_MAX_ALIGN_SIZE`) once it is that long, to its own size rounded up to a word below
//! that. So a layout whose alignment is at most both goes through the plain functions, the
//! rule the standard library's `System` allocator applies to `malloc` too; any other through
//! the aligned ones.

// A global allocator is unsafe code by its trait's definition: the one place the CLI has any.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment mimalloc gives any block at least this long (`MI_MAX_ALIGN_SIZE`, C's
/// `max_align_t`, on the targets the host is built for).
const NATURAL_ALIGNMENT: usize = 16;

/// mimalloc as the global allocator.
pub struct MiMalloc;

/// Whether a block of `size` bytes from the plain functions is aligned to `align`.
fn plain_suffices(size: usize, align: usize) -> bool {
    align <= NATURAL_ALIGNMENT && align <= size
}

/// A block for `layout` from `plain` when that aligns it, else from `aligned`.
///
/// # Safety
///
/// As the functions': `layout`'s alignment is a power of two, which a `Layout` guarantees.
#[inline]
unsafe fn block(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    // SAFETY: the caller's.
    unsafe {
        if plain_suffices(layout.size(), layout.align()) {
            plain(layout.size()).cast()
        } else {
            aligned(layout.size(), layout.align()).cast()
        }
    }
}

// SAFETY: every method hands its layout's size to mimalloc, through the aligned functions
// whenever the plain ones would not give the layout's alignment (see the module's doc), and
// frees with `mi_free`, which takes a block from either.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's allocation functions take any size and a power-of-two alignment,
        // which a `Layout` guarantees.
        unsafe { block(layout, mi::mi_malloc, mi::mi_malloc_aligned) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { block(layout, mi::mi_zalloc, mi::mi_zalloc_aligned) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the trait's contract), so from mimalloc.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout` (the trait's contract); the
        // block that comes back holds `new_size` bytes aligned as `layout` asks.
        unsafe {
            if plain_suffices(new_size, layout.align()) {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size up to a few pages with every alignment up to 64, three blocks of each at
    /// once (consecutive blocks of one size differ in alignment): each comes back aligned as
    /// asked, holds what was written, keeps it through a move to a larger size and back, and
    /// a zeroed one is zero.
    #[test]
    fn every_layout_is_aligned_and_keeps_its_bytes() {
        let allocator = MiMalloc;
        for align in [1, 2, 4, 8, 16, 32, 64] {
            for size in (1..=256).chain((257..=3 * 4096).step_by(61)) {
                let layout = Layout::from_size_align(size, align).unwrap();
                let larger = Layout::from_size_align(size * 3, align).unwrap();
                let pattern = |block: usize, at: usize| (block * 31 + at * 7 + size) as u8;
                // SAFETY: the layouts are non-zero in size; each block is written within its
                // size and freed once, with the layout it has at that moment.
                unsafe {
                    let zeroed = [(); 3].map(|()| allocator.alloc_zeroed(layout));
                    for block in zeroed {
                        assert_eq!(block as usize % align, 0, "zeroed {size} bytes aligned {align}");
                        assert!(std::slice::from_raw_parts(block, size).iter().all(|&byte| byte == 0));
                        allocator.dealloc(block, layout);
                    }
                    let blocks = [(); 3].map(|()| allocator.alloc(layout));
                    for (n, &block) in blocks.iter().enumerate() {
                        assert_eq!(block as usize % align, 0, "{size} bytes aligned {align}");
                        (0..size).for_each(|at| block.add(at).write(pattern(n, at)));
                    }
                    for (n, block) in blocks.into_iter().enumerate() {
                        let grown = allocator.realloc(block, layout, larger.size());
                        assert_eq!(grown as usize % align, 0, "{size} grown, aligned {align}");
                        let shrunk = allocator.realloc(grown, larger, size);
                        assert_eq!(shrunk as usize % align, 0, "{size} shrunk back, aligned {align}");
                        let kept = (0..size).all(|at| shrunk.add(at).read() == pattern(n, at));
                        assert!(kept, "{size} bytes aligned {align} kept through a move");
                        allocator.dealloc(shrunk, layout);
                    }
                }
            }
        }
    }
}
