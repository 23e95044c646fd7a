//! The global allocator of the binary and the benches: mimalloc, called as its own `malloc` is.
//!
//! Why not the `mimalloc` crate's `MiMalloc`: it hands every allocation to `mi_malloc_aligned`,
//! and mimalloc 3 serves that fast only when a free block of the size class happens to be at
//! hand; otherwise it over-allocates, unless the block size is a power of two. Every mimalloc
//! block is aligned to 16 bytes anyway, so the alignments Rust's values ask for need no aligned
//! call: on the Windows-dense corpus this took 6% of the instructions and a few MB of memory
//! (BENCHMARKS.md). Larger alignments still go to the aligned functions.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// What every mimalloc block is aligned to (`MI_MAX_ALIGN_SIZE`).
const BLOCK_ALIGN: usize = 16;

/// mimalloc as the global allocator: `#[global_allocator] static A: Mimalloc = Mimalloc;`.
pub struct Mimalloc;

// SAFETY: mimalloc's functions meet `GlobalAlloc`'s contract: blocks of at least the size asked,
// aligned to 16 bytes (or to the alignment given to the aligned variants), null on failure, and
// `mi_free`/`mi_realloc` take any block either kind of call returned.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
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
            if layout.align() <= BLOCK_ALIGN {
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
            if layout.align() <= BLOCK_ALIGN {
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
}
