//! The plugin's heap: the C `malloc` family every allocation in the component goes through —
//! Rust's (the standard library's system allocator is `malloc`), wasi-libc's own, and what the
//! host hands in through `cabi_realloc` and wasi-libc later frees. One allocator for all three
//! is why this replaces `malloc` rather than Rust's global allocator: a Rust allocator beside
//! wasi-libc's `dlmalloc` sees blocks it never made freed into it.
//!
//! The host runs every call on a fresh instance that lives for that call (and the contribution
//! and view asked right after it), so a call's blocks are mostly small and die with the
//! instance. Small blocks come from an arena in size classes: a freed block goes on its class's
//! list and serves the next request of that class, a new one is cut from the arena by moving a
//! pointer. Large blocks, and every block once the arena is used up, go to `dlmalloc`, which
//! coalesces and reuses as `malloc` always did: what the arena cannot reuse is bounded by its
//! size.
//!
//! On by default (the `instance-heap` feature); a plugin that links its own `malloc` turns the
//! SDK's default features off.

/// Small blocks' payloads: 16 bytes to 16 KiB, doubling.
const CLASSES: usize = 11;
const SMALLEST: usize = 16;
const LARGEST_SMALL: usize = SMALLEST << (CLASSES - 1);
/// What precedes every block's payload (its class, or a large block's size and offset); 16
/// bytes keep payloads aligned as C's `malloc` must (`max_align_t`).
const HEADER: usize = 16;

/// The class of a request of `size` bytes, or `None` when it is large.
fn class_of(size: usize) -> Option<usize> {
    if size > LARGEST_SMALL {
        return None;
    }
    let rounded = size.max(SMALLEST) - 1;
    Some((usize::BITS - rounded.leading_zeros() - SMALLEST.trailing_zeros()) as usize)
}

fn class_bytes(class: usize) -> usize {
    SMALLEST << class
}

/// Small blocks cut from `[base, base + capacity)`: offsets and free lists, kept apart from
/// the memory so the logic is tested natively over a buffer.
#[derive(Debug)]
pub(crate) struct SmallBlocks {
    base: usize,
    capacity: usize,
    /// The offset of the arena's first byte never handed out.
    next: usize,
    /// Each class's freed payloads, linked through their first word; 0 ends a list.
    free: [usize; CLASSES],
}

impl SmallBlocks {
    pub(crate) const fn new(base: usize, capacity: usize) -> Self {
        Self { base, capacity, next: 0, free: [0; CLASSES] }
    }

    /// Whether `payload` was handed out here (and so is not `dlmalloc`'s).
    pub(crate) fn holds(&self, payload: usize) -> bool {
        payload.wrapping_sub(self.base) < self.capacity
    }

    /// A payload of at least `size` bytes, aligned to [`HEADER`], or `None` when `size` is
    /// large or the arena is used up.
    ///
    /// # Safety
    /// `[base, base + capacity)` is memory this arena alone writes, aligned to [`HEADER`].
    #[allow(unsafe_code)]
    pub(crate) unsafe fn take(&mut self, size: usize) -> Option<usize> {
        let class = class_of(size)?;
        let freed = self.free[class];
        if freed != 0 {
            // SAFETY: a freed payload of this arena holds the next one's address.
            self.free[class] = unsafe { *(freed as *const usize) };
            return Some(freed);
        }
        let block = HEADER + class_bytes(class);
        if self.capacity - self.next < block {
            return None;
        }
        let payload = self.base + self.next + HEADER;
        self.next += block;
        // SAFETY: the header lies in the arena, in the block just cut.
        unsafe { *((payload - HEADER) as *mut usize) = class };
        Some(payload)
    }

    /// Hands `payload` back to its class's list.
    ///
    /// # Safety
    /// `payload` was returned by [`take`](Self::take) and is not in use or handed back.
    #[allow(unsafe_code)]
    pub(crate) unsafe fn give_back(&mut self, payload: usize) {
        // SAFETY: the caller's contract: a live payload of this arena, its header before it.
        let class = unsafe { *((payload - HEADER) as *const usize) };
        // SAFETY: the payload is at least a word long and no longer in use.
        unsafe { *(payload as *mut usize) = self.free[class] };
        self.free[class] = payload;
    }

    /// How many bytes `payload` holds.
    ///
    /// # Safety
    /// `payload` was returned by [`take`](Self::take) and is not handed back.
    #[allow(unsafe_code)]
    pub(crate) unsafe fn bytes_of(&self, payload: usize) -> usize {
        // SAFETY: the caller's contract.
        class_bytes(unsafe { *((payload - HEADER) as *const usize) })
    }
}

#[cfg(all(target_arch = "wasm32", feature = "instance-heap"))]
mod c_heap {
    // An allocator cannot be written without `unsafe`: it hands out raw memory.
    #![allow(unsafe_code)]

    use std::cell::UnsafeCell;

    use super::{HEADER, SmallBlocks};

    /// What the arena holds; zeroed, so it takes no room in the component.
    const ARENA_BYTES: usize = 1 << 20;
    const ENOMEM: i32 = 12;
    const EINVAL: i32 = 22;

    #[repr(C, align(16))]
    struct Bytes([u8; ARENA_BYTES]);

    /// The arena's memory, a static of its own: all zeros, it lies in `.bss` and takes no
    /// room in the component (beside the allocators' state it would be written out whole).
    struct Arena(UnsafeCell<Bytes>);

    struct Heap {
        small: UnsafeCell<Option<SmallBlocks>>,
        large: UnsafeCell<dlmalloc::Dlmalloc>,
    }

    // SAFETY: a wasm32-wasip2 instance runs one thread, and none of these functions is
    // re-entered: nothing they call allocates.
    unsafe impl Sync for Arena {}
    // SAFETY: as `Arena`.
    unsafe impl Sync for Heap {}

    static ARENA: Arena = Arena(UnsafeCell::new(Bytes([0; ARENA_BYTES])));
    static HEAP: Heap =
        Heap { small: UnsafeCell::new(None), large: UnsafeCell::new(dlmalloc::Dlmalloc::new()) };

    #[allow(clippy::mut_from_ref)]
    fn small() -> &'static mut SmallBlocks {
        // SAFETY: one thread, and no caller holds the reference across another call here.
        let small = unsafe { &mut *HEAP.small.get() };
        small.get_or_insert_with(|| SmallBlocks::new(ARENA.0.get() as usize, ARENA_BYTES))
    }

    #[allow(clippy::mut_from_ref)]
    fn large() -> &'static mut dlmalloc::Dlmalloc {
        // SAFETY: as `small`.
        unsafe { &mut *HEAP.large.get() }
    }

    /// A large block's header: its payload's size and its offset from `dlmalloc`'s block.
    unsafe fn large_header(payload: usize) -> (usize, usize) {
        let header = (payload - HEADER) as *const usize;
        // SAFETY: a large payload is preceded by its header (`take_large`).
        unsafe { (*header, *header.add(1)) }
    }

    /// A block from `dlmalloc`, its payload aligned to `align` (a power of two), preceded
    /// by its header.
    unsafe fn take_large(size: usize, align: usize) -> *mut u8 {
        let offset = align.max(HEADER);
        let Some(total) = size.checked_add(offset) else { return std::ptr::null_mut() };
        // SAFETY: `offset` is a power of two and `total` non-zero.
        let block = unsafe { large().malloc(total, offset) };
        if block.is_null() {
            return block;
        }
        let payload = block as usize + offset;
        let header = (payload - HEADER) as *mut usize;
        // SAFETY: the header lies in the block, before the payload.
        unsafe { (header.write(size), header.add(1).write(offset)) };
        payload as *mut u8
    }

    unsafe fn free_large(payload: usize) {
        // SAFETY: the caller's contract: a live large payload.
        let (size, offset) = unsafe { large_header(payload) };
        // SAFETY: the block `take_large` had from `dlmalloc`, with its size and alignment.
        unsafe { large().free((payload - offset) as *mut u8, size + offset, offset) }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn malloc(size: usize) -> *mut u8 {
        // SAFETY: the arena's memory is `ARENA`, which only it writes.
        match unsafe { small().take(size) } {
            Some(payload) => payload as *mut u8,
            // SAFETY: any size; 16 is a power of two.
            None => unsafe { take_large(size, HEADER) },
        }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn free(payload: *mut u8) {
        let address = payload as usize;
        if payload.is_null() {
            return;
        }
        if small().holds(address) {
            // SAFETY: C's contract: a live block this allocator handed out.
            unsafe { small().give_back(address) }
        } else {
            // SAFETY: not the arena's, so a large block.
            unsafe { free_large(address) }
        }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut u8 {
        let Some(bytes) = count.checked_mul(size) else { return std::ptr::null_mut() };
        // SAFETY: any size.
        let payload = unsafe { malloc(bytes) };
        if !payload.is_null() {
            // SAFETY: the payload holds at least `bytes`; a reused block is not zeroed.
            unsafe { payload.write_bytes(0, bytes) };
        }
        payload
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn realloc(payload: *mut u8, size: usize) -> *mut u8 {
        if payload.is_null() {
            // SAFETY: any size.
            return unsafe { malloc(size) };
        }
        // SAFETY: C's contract: a live block this allocator handed out.
        let held = unsafe { malloc_usable_size(payload) };
        // A small block grows within its class; anything else moves (a large block too:
        // `dlmalloc` cannot resize in place a block aligned past its own 8 bytes).
        if size <= held && small().holds(payload as usize) {
            return payload;
        }
        // SAFETY: any size.
        let moved = unsafe { malloc(size) };
        if !moved.is_null() {
            // SAFETY: two live blocks, apart, each at least this long.
            unsafe { std::ptr::copy_nonoverlapping(payload, moved, held.min(size)) };
            // SAFETY: the old block, copied and no longer used.
            unsafe { free(payload) };
        }
        moved
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut u8 {
        if !align.is_power_of_two() {
            return std::ptr::null_mut();
        }
        if align <= HEADER {
            // SAFETY: any size; every payload is aligned to 16.
            return unsafe { malloc(size) };
        }
        // SAFETY: `align` is a power of two.
        unsafe { take_large(size, align) }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut u8 {
        // SAFETY: as `aligned_alloc`.
        unsafe { aligned_alloc(align, size) }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn posix_memalign(out: *mut *mut u8, align: usize, size: usize) -> i32 {
        if !align.is_power_of_two() || align < size_of::<usize>() {
            return EINVAL;
        }
        // SAFETY: as `aligned_alloc`.
        let payload = unsafe { aligned_alloc(align, size) };
        if payload.is_null() {
            return ENOMEM;
        }
        // SAFETY: C's contract: `out` is writable.
        unsafe { out.write(payload) };
        0
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn malloc_usable_size(payload: *mut u8) -> usize {
        let address = payload as usize;
        if payload.is_null() {
            0
        } else if small().holds(address) {
            // SAFETY: C's contract: a live block this allocator handed out.
            unsafe { small().bytes_of(address) }
        } else {
            // SAFETY: not the arena's, so a large block.
            unsafe { large_header(address).0 }
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    /// An arena over a buffer of `words` words, aligned to 16.
    fn arena(buffer: &mut Vec<u128>) -> SmallBlocks {
        SmallBlocks::new(buffer.as_mut_ptr() as usize, buffer.len() * 16)
    }

    #[test]
    fn requests_fall_in_the_smallest_class_that_holds_them() {
        let bytes = |size| class_of(size).map(class_bytes);
        let sizes = [0, 1, 16, 17, 32, 33, 1000, 1024, 1025, 16384];
        assert_eq!(sizes.map(bytes), [16, 16, 16, 32, 32, 64, 1024, 1024, 2048, 16384].map(Some));
        assert_eq!(bytes(16385), None, "large");
    }

    #[test]
    fn blocks_are_aligned_apart_and_inside() {
        let mut buffer = vec![0u128; 64];
        let mut small = arena(&mut buffer);
        let base = buffer.as_ptr() as usize;
        let (a, b, c) = unsafe { (small.take(3).unwrap(), small.take(20).unwrap(), small.take(16).unwrap()) };
        assert_eq!((a - base, b - base, c - base), (16, 48, 96), "header, 16; header, 32; header, 16");
        assert!([a, b, c].iter().all(|payload| payload % 16 == 0 && small.holds(*payload)));
        assert_eq!(unsafe { (small.bytes_of(a), small.bytes_of(b)) }, (16, 32));
        assert!(!small.holds(base - 1) && !small.holds(base + 64 * 16));
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_class() {
        let mut buffer = vec![0u128; 64];
        let mut small = arena(&mut buffer);
        let (a, b) = unsafe { (small.take(10).unwrap(), small.take(10).unwrap()) };
        let wide = unsafe { small.take(40).unwrap() };
        unsafe { (small.give_back(a), small.give_back(b)) };
        let again = unsafe { [small.take(16).unwrap(), small.take(1).unwrap()] };
        assert_eq!(again, [b, a], "the last freed first");
        let next = unsafe { small.take(16).unwrap() };
        assert!(next > wide, "a new block once the list is empty");
        unsafe { small.give_back(wide) };
        assert_ne!(unsafe { small.take(16).unwrap() }, wide, "a class serves its own size only");
    }

    #[test]
    fn a_used_up_arena_and_a_large_request_go_elsewhere() {
        let mut buffer = vec![0u128; 8];
        let mut small = arena(&mut buffer);
        assert!(unsafe { small.take(64) }.is_some(), "80 of 128 bytes");
        assert_eq!(unsafe { small.take(64) }, None, "does not fit");
        assert!(unsafe { small.take(16) }.is_some(), "what is left still serves");
        let mut buffer = vec![0u128; 4096];
        let mut roomy = arena(&mut buffer);
        assert_eq!(unsafe { roomy.take(LARGEST_SMALL + 1) }, None);
        assert!(unsafe { roomy.take(LARGEST_SMALL) }.is_some());
    }
}
