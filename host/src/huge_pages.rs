//! Large memory in 2 MiB pages, so the kernel takes it back quickly.
//!
//! When a process ends, the kernel frees every page it held, one page
//! table entry at a time: for 530 MB in 4 KiB pages (136,000 of them) that
//! took 54 to 150 ms on the development machine, after the last output and
//! before the process had ended, which is what a wall-clock bound sees. In
//! transparent huge pages (2 MiB, 512 times fewer entries) the same memory
//! is freed in 0 to 2 ms (measured with a child that touched 530 MB and
//! exited; `docs/PERFORMANCE.md`). Faulting the memory in is cheaper too.
//!
//! Linux gives transparent huge pages only to memory that asks for them
//! (`madvise(MADV_HUGEPAGE)`) when `/sys/kernel/mm/transparent_hugepage/
//! enabled` is `madvise`, the common default; with `always` they ask for
//! nothing they would not get anyway, with `never` they change nothing.
//! Two kinds of memory ask here:
//! - [`HugePages`]: the process's allocations of [`BIG`] bytes or more
//!   (the native engine's heap chunks, large vectors and strings, the VM's
//!   stacks) are mapped on their own, starting on a 2 MiB boundary, and
//!   given back to the system when freed;
//! - [`LinearMemories`]: the wasm guest's linear memory (wasmtime's memory
//!   creator), reserved as wasmtime would reserve it.
//!
//! A huge page is used only where one fits whole in a mapping. A large
//! allocation's mapping is rounded up to whole huge pages only when that
//! adds at most half of it, and what the rounding adds is counted with
//! what the allocator holds ([`rounding`], in the native engine's meter).
//! Huge pages are asked for only once [`HUGE_FROM`] bytes are held (in
//! large mappings, or in a linear memory past it). Elsewhere than Linux
//! both are the system's ordinary allocation.

use std::alloc::{GlobalAlloc, Layout};

/// Allocations at least this large are mapped on their own, in huge pages
/// where they fit.
pub const BIG: usize = 1 << 20;

/// A 2 MiB page (the x86-64 and aarch64 transparent huge page).
#[cfg(target_os = "linux")]
const HUGE: usize = 2 << 20;

/// The system page size every mapping is a multiple of.
#[cfg(target_os = "linux")]
const PAGE: usize = 4096;

/// `A` for what is smaller than [`BIG`], mappings of their own (in huge
/// pages where they fit) for the rest.
pub struct HugePages<A>(pub A);

/// Bytes mapped beyond what was asked for (see [`mapping_len`]).
static ROUNDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Bytes in the large allocations' mappings now.
static MAPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Huge pages are asked for once this much is held in large mappings (or
/// in a linear memory): below it the process's end frees its memory in a
/// few milliseconds anyway (8,192 small pages), while a huge page is
/// zeroed whole when first touched, which costs a small program (its
/// heap's last, mostly empty chunk, copied at start) more than it saves.
pub const HUGE_FROM: usize = 32 << 20;

/// Bytes the large allocations' mappings hold beyond what was asked for:
/// a meter of what the process pays adds them to what the allocator
/// counts.
pub fn rounding() -> usize {
    ROUNDING.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(target_os = "linux")]
fn round_to_page(n: usize) -> Option<usize> {
    n.checked_add(PAGE - 1).map(|n| n & !(PAGE - 1))
}

/// How long the mapping of an allocation of `size` bytes is: rounded up
/// to whole huge pages when that adds at most half of `size` (1.4 MB
/// becomes 2 MiB, one huge page; 2.5 MiB stays 2.5 MiB, one huge page and
/// 128 small ones), so most of a large allocation is in huge pages and
/// what is mapped for nothing stays bounded (and counted: [`rounding`]).
#[cfg(target_os = "linux")]
fn mapping_len(size: usize) -> Option<usize> {
    let exact = round_to_page(size)?;
    let whole = size.checked_add(HUGE - 1)? & !(HUGE - 1);
    Some(if whole - size <= size / 2 {
        whole
    } else {
        exact
    })
}

/// Maps `len` bytes (a multiple of the page size) of zeroed memory
/// starting on a 2 MiB boundary, with `prot`. Null when the system
/// refuses.
#[cfg(target_os = "linux")]
unsafe fn map_aligned(len: usize, prot: libc::c_int) -> *mut u8 {
    let Some(span) = len.checked_add(HUGE) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a fresh anonymous mapping; nothing else refers to it.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    let start = raw as usize;
    let aligned = (start + HUGE - 1) & !(HUGE - 1);
    let end = aligned + len;
    // SAFETY: both pieces are inside the mapping just made and outside the
    // part kept.
    unsafe {
        if aligned > start {
            libc::munmap(raw, aligned - start);
        }
        if start + span > end {
            libc::munmap(end as *mut libc::c_void, start + span - end);
        }
    }
    aligned as *mut u8
}

/// Asks for huge pages over `len` bytes at `at`. Advice only: where it is
/// refused the memory is ordinary.
#[cfg(target_os = "linux")]
unsafe fn advise_huge(at: *mut u8, len: usize) {
    // SAFETY: the caller's mapping.
    unsafe { libc::madvise(at.cast(), len, libc::MADV_HUGEPAGE) };
}

/// Counts a mapping of `len` bytes for `size` asked for; whether it
/// should ask for huge pages (what was mapped before it passes
/// [`HUGE_FROM`]).
#[cfg(target_os = "linux")]
fn add_mapping(len: usize, size: usize) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    ROUNDING.fetch_add(len - size, Relaxed);
    MAPPED.fetch_add(len, Relaxed) >= HUGE_FROM
}

#[cfg(target_os = "linux")]
fn remove_mapping(len: usize, size: usize) {
    use std::sync::atomic::Ordering::Relaxed;
    ROUNDING.fetch_sub(len - size, Relaxed);
    MAPPED.fetch_sub(len, Relaxed);
}

// SAFETY: allocations below `BIG` are `A`'s; the others are mappings of
// their own, at least page-aligned (every `Layout` this serves asks for at
// most a page's alignment, else it goes to `A`), zeroed by the system, and
// unmapped with the length they were mapped with (`mapping_len` of the
// size the caller must hand back).
#[cfg(target_os = "linux")]
unsafe impl<A: GlobalAlloc> GlobalAlloc for HugePages<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::mapped(layout) {
            // SAFETY: forwarded as given.
            return unsafe { self.0.alloc(layout) };
        }
        let Some(len) = mapping_len(layout.size()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a fresh mapping.
        let p = unsafe { map_aligned(len, libc::PROT_READ | libc::PROT_WRITE) };
        if !p.is_null() && add_mapping(len, layout.size()) {
            // SAFETY: the mapping just made.
            unsafe { advise_huge(p, len) };
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::mapped(layout) {
            // SAFETY: as `alloc`; a fresh mapping is zeroed.
            unsafe { self.alloc(layout) }
        } else {
            // SAFETY: forwarded as given.
            unsafe { self.0.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if Self::mapped(layout) {
            let len = mapping_len(layout.size()).unwrap_or(0);
            remove_mapping(len, layout.size());
            // SAFETY: `ptr` was mapped by `alloc` with this length.
            unsafe { libc::munmap(ptr.cast(), len) };
        } else {
            // SAFETY: forwarded as given.
            unsafe { self.0.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` hold for the new one.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (Self::mapped(layout), Self::mapped(new_layout)) {
            // SAFETY: forwarded as given.
            (false, false) => unsafe { self.0.realloc(ptr, layout, new_size) },
            (true, true) => {
                let (Some(old_len), Some(new_len)) =
                    (mapping_len(layout.size()), mapping_len(new_size))
                else {
                    return std::ptr::null_mut();
                };
                let moved = if new_len == old_len {
                    ptr
                } else if new_len < old_len {
                    // SAFETY: the tail of the mapping `alloc` made.
                    unsafe { libc::munmap(ptr.add(new_len).cast(), old_len - new_len) };
                    ptr
                } else {
                    // A new place on a 2 MiB boundary, and the pages moved
                    // there (their page table entries, not their bytes).
                    // SAFETY: `ptr` is a mapping of `old_len` bytes made by
                    // `alloc`; `to` a fresh one of `new_len` that the move
                    // replaces.
                    unsafe {
                        let to = map_aligned(new_len, libc::PROT_READ | libc::PROT_WRITE);
                        if to.is_null() {
                            return std::ptr::null_mut();
                        }
                        let moved = libc::mremap(
                            ptr.cast(),
                            old_len,
                            new_len,
                            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                            to,
                        );
                        if moved == libc::MAP_FAILED {
                            libc::munmap(to.cast(), new_len);
                            return std::ptr::null_mut();
                        }
                        moved.cast()
                    }
                };
                remove_mapping(old_len, layout.size());
                if add_mapping(new_len, new_size) {
                    // The moved pages keep the old mapping's advice.
                    // SAFETY: the mapping just moved or resized.
                    unsafe { advise_huge(moved, new_len) };
                }
                moved
            }
            _ => {
                // Across the threshold: a new allocation and a copy.
                // SAFETY: as `GlobalAlloc::realloc`'s default.
                unsafe {
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl<A> HugePages<A> {
    #[inline]
    fn mapped(layout: Layout) -> bool {
        layout.size() >= BIG && layout.align() <= PAGE
    }
}

#[cfg(not(target_os = "linux"))]
// SAFETY: forwards everything to `A`.
unsafe impl<A: GlobalAlloc> GlobalAlloc for HugePages<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { self.0.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { self.0.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

/// Makes the wasm guest's linear memories (`Config::with_host_memory`):
/// each one reserved as wasmtime reserves its own (the reservation
/// wasmtime asks for plus its guard, inaccessible) and made accessible as
/// it grows, asking for huge pages over all of it. (The guest's data,
/// about 10 MB, is copied in at start: wasmtime maps a module's initial
/// memory from its compiled image only into memories it made itself. In
/// huge pages the copy costs a few milliseconds; in small ones twice as
/// much, for their 2,500 page faults.)
#[cfg(target_os = "linux")]
pub struct LinearMemories;

#[cfg(target_os = "linux")]
struct LinearMemory {
    /// The reservation's start, as an address (`Send` and `Sync`).
    base: usize,
    /// Bytes accessible.
    size: usize,
    /// Bytes the memory may grow to without moving.
    capacity: usize,
    /// Bytes mapped: the capacity and the guard after it.
    mapped: usize,
}

#[cfg(target_os = "linux")]
impl LinearMemory {
    fn make_accessible(&mut self, new_size: usize) -> Result<(), String> {
        if new_size > self.capacity {
            return Err(format!(
                "a linear memory of {new_size} bytes does not fit its reservation of {}",
                self.capacity
            ));
        }
        if new_size > self.size {
            let len = round_to_page(new_size - self.size).ok_or("size overflow")?;
            // SAFETY: inside the reservation this memory owns.
            let r = unsafe {
                libc::mprotect(
                    (self.base + self.size) as *mut libc::c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            if r != 0 {
                return Err(format!(
                    "cannot grow the linear memory: {}",
                    std::io::Error::last_os_error()
                ));
            }
            // The guest grows its memory by as little as 64 KiB at a time
            // and uses it at once: a 2 MiB range the memory ended inside
            // was given small pages, since a huge page did not fit in it
            // then. Now that it fits, gather it into one (a copy of at
            // most 2 MiB per 2 MiB grown), once the memory is large
            // enough for its end to matter ([`HUGE_FROM`]). Advice only.
            let partial = self.size & !(HUGE - 1);
            if partial >= HUGE_FROM && partial < self.size && partial + HUGE <= new_size {
                // SAFETY: inside the accessible part of the reservation.
                unsafe {
                    libc::madvise(
                        (self.base + partial) as *mut libc::c_void,
                        HUGE,
                        libc::MADV_COLLAPSE,
                    )
                };
            }
        }
        self.size = new_size;
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl Drop for LinearMemory {
    fn drop(&mut self) {
        // SAFETY: the whole mapping this memory made; wasmtime drops the
        // memory only when no instance uses it.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.mapped) };
    }
}

#[cfg(target_os = "linux")]
// SAFETY: the memory is `size` accessible, zeroed bytes at `base`, followed
// by inaccessible bytes up to `capacity` plus the guard wasmtime asked for;
// it grows in place within `capacity` and never moves.
unsafe impl wasmtime::LinearMemory for LinearMemory {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.capacity
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        self.make_accessible(new_size).map_err(wasmtime::Error::msg)
    }

    fn as_ptr(&self) -> *mut u8 {
        self.base as *mut u8
    }
}

#[cfg(target_os = "linux")]
// SAFETY: every memory made honours the reservation and guard wasmtime
// asks for (its compiled code relies on them to leave out bounds checks).
unsafe impl wasmtime::MemoryCreator for LinearMemories {
    fn new_memory(
        &self,
        _ty: wasmtime::MemoryType,
        minimum: usize,
        maximum: Option<usize>,
        reserved_size_in_bytes: Option<usize>,
        guard_size_in_bytes: usize,
    ) -> Result<Box<dyn wasmtime::LinearMemory>, String> {
        let capacity = match (reserved_size_in_bytes, maximum) {
            (Some(r), _) => r,
            (None, Some(m)) => round_to_page(m).ok_or("size overflow")?,
            (None, None) => 4 << 30,
        };
        if minimum > capacity {
            return Err(format!(
                "a linear memory of at least {minimum} bytes does not fit {capacity}"
            ));
        }
        let mapped = capacity
            .checked_add(guard_size_in_bytes)
            .and_then(round_to_page)
            .ok_or("size overflow")?;
        // SAFETY: a fresh reservation, inaccessible until grown.
        let base = unsafe { map_aligned(mapped, libc::PROT_NONE) };
        if base.is_null() {
            return Err(format!(
                "cannot reserve {mapped} bytes for a linear memory: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: the reservation just made.
        unsafe { advise_huge(base, capacity) };
        let mut memory = LinearMemory {
            base: base as usize,
            size: 0,
            capacity,
            mapped,
        };
        memory.make_accessible(minimum)?;
        Ok(Box::new(memory))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large and small allocations, growing and shrinking across the
    /// threshold, keep their bytes; large ones start on a page boundary.
    #[test]
    fn allocations_keep_their_bytes_across_the_threshold() {
        let a = HugePages(std::alloc::System);
        unsafe {
            let small = Layout::from_size_align(1000, 8).unwrap();
            let p = a.alloc(small);
            std::ptr::write_bytes(p, 7, 1000);
            let p = a.realloc(p, small, 3 << 20);
            assert!(!p.is_null());
            assert_eq!(p as usize % 4096, 0);
            assert!((0..1000).all(|i| *p.add(i) == 7));
            std::ptr::write_bytes(p, 9, 3 << 20);
            let big = Layout::from_size_align(3 << 20, 8).unwrap();
            let p = a.realloc(p, big, 5 << 20);
            assert!((0..3 << 20).step_by(4093).all(|i| *p.add(i) == 9));
            let bigger = Layout::from_size_align(5 << 20, 8).unwrap();
            let p = a.realloc(p, bigger, 10);
            assert!((0..10).all(|i| *p.add(i) == 9));
            a.dealloc(p, Layout::from_size_align(10, 8).unwrap());
            let z = a.alloc_zeroed(big);
            assert!((0..3 << 20).step_by(4093).all(|i| *z.add(i) == 0));
            a.dealloc(z, big);
        }
    }
}
