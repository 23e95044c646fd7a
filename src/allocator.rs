//! The global allocator of the binary and the benches: mimalloc, called as its own `malloc` is.
//!
//! Why not the `mimalloc` crate's `MiMalloc`: it hands every allocation to `mi_malloc_aligned`,
//! and mimalloc 3 serves that fast only when a free block of the size class happens to be at
//! hand; otherwise it over-allocates, unless the block size is a power of two. Every mimalloc
//! block is aligned to 16 bytes anyway, so the alignments Rust's values ask for need no aligned
//! call, and a lint's millions of small allocations keep to mimalloc's fast path without the
//! over-allocation (BENCHMARKS.md). Larger alignments still go to the aligned functions.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// What every mimalloc block of at least this size is aligned to (`MI_MAX_ALIGN_SIZE`). A
/// smaller block is aligned only to its size class (an 8-byte block to 8), so a layout whose
/// alignment exceeds its size goes to the aligned functions, as the `mimalloc` crate does.
const BLOCK_ALIGN: usize = 16;

/// What every mimalloc block is aligned to: its size classes are whole machine words.
const WORD_ALIGN: usize = std::mem::size_of::<usize>();

/// Whether a block of `size` bytes from the plain functions is aligned enough for `align`. The
/// first test alone decides almost every Rust allocation.
#[inline]
fn plain_suffices(size: usize, align: usize) -> bool {
    align <= WORD_ALIGN || (align <= BLOCK_ALIGN && align <= size)
}

/// mimalloc as the global allocator: `#[global_allocator] static A: Mimalloc = Mimalloc;`.
pub struct Mimalloc;

// SAFETY: mimalloc's functions meet `GlobalAlloc`'s contract: blocks of at least the size asked,
// aligned to 16 bytes when at least 16 bytes long (the plain functions are called only then, or
// for alignments no larger than the size; otherwise the aligned variants), null on failure, and
// `mi_free`/`mi_realloc` take any block either kind of call returned.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain_suffices(layout.size(), layout.align()) {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain_suffices(layout.size(), layout.align()) {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the caller's promise).
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout` (the caller's promise).
        unsafe {
            // The new block must be aligned as the old one was, whatever its new size.
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

    /// Blocks come back aligned as asked, small and large alignments, and survive a realloc.
    #[test]
    fn blocks_are_aligned_and_reallocate() {
        let a = Mimalloc;
        for (size, align) in [
            (1, 1),
            (24, 8),
            (48, 16),
            (3000, 8),
            (100, 64),
            (5000, 4096),
        ] {
            let layout = Layout::from_size_align(size, align).unwrap();
            unsafe {
                let p = a.alloc(layout);
                assert!(
                    !p.is_null() && (p as usize).is_multiple_of(align),
                    "{size} {align}"
                );
                p.write_bytes(0xab, size);
                let q = a.realloc(p, layout, size * 3);
                assert!(
                    !q.is_null() && (q as usize).is_multiple_of(align),
                    "{size} {align}"
                );
                assert_eq!(*q.add(size - 1), 0xab);
                a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                let z = a.alloc_zeroed(layout);
                assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                a.dealloc(z, layout);
            }
        }
    }

    /// Layouts whose alignment exceeds their size (`Layout::from_size_align(8, 16)` is valid):
    /// mimalloc's small size classes are aligned only to their size, so these must not take
    /// the plain path. Many blocks each, so one lucky address can't pass the test.
    #[test]
    fn small_over_aligned_layouts_are_aligned() {
        let a = Mimalloc;
        for (size, align) in [(1, 16), (8, 16), (15, 16), (1, 8), (4, 8), (2, 4), (24, 32)] {
            let layout = Layout::from_size_align(size, align).unwrap();
            let blocks: Vec<*mut u8> = (0..64)
                .map(|_| unsafe {
                    let p = a.alloc(layout);
                    assert!(
                        !p.is_null() && (p as usize).is_multiple_of(align),
                        "alloc {size} {align}"
                    );
                    let z = a.alloc_zeroed(layout);
                    assert!(
                        !z.is_null() && (z as usize).is_multiple_of(align),
                        "alloc_zeroed {size} {align}"
                    );
                    a.dealloc(z, layout);
                    p
                })
                .collect();
            for p in blocks {
                unsafe { a.dealloc(p, layout) };
            }
        }
        // A block shrunk below its alignment stays aligned.
        for _ in 0..64 {
            let layout = Layout::from_size_align(64, 16).unwrap();
            unsafe {
                let p = a.alloc(layout);
                let q = a.realloc(p, layout, 8);
                assert!(
                    !q.is_null() && (q as usize).is_multiple_of(16),
                    "realloc 64 -> 8"
                );
                a.dealloc(q, Layout::from_size_align(8, 16).unwrap());
            }
        }
    }
}
