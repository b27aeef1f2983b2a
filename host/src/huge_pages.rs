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
//! - [`LinearMemory`]: the wasm guest's linear memory, which wasmtime
//!   makes (its initial data mapped copy-on-write from the compiled
//!   guest), found after instantiation and asked for huge pages as it
//!   grows.
//!
//! A large allocation's mapping, once freed, is kept for the next large
//! allocation it fits (at most [`KEPT_SLOTS`] of them, [`KEPT_MAX`] bytes
//! in all): a program that makes and drops big strings or vectors over
//! and over (each `string-append` of a long string) would otherwise have
//! the system map, zero and fault in fresh pages for each, which took
//! four fifths of such a program's time (docs/PERFORMANCE.md). Kept
//! mappings are not counted by the native engine's meter: the process
//! may hold up to [`KEPT_MAX`] bytes beyond its cap, memory it held for
//! the program before.
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

/// How many freed large mappings are kept for reuse at most.
pub const KEPT_SLOTS: usize = 8;

/// How many bytes the freed large mappings kept for reuse hold at most.
pub const KEPT_MAX: usize = 32 << 20;

/// `A` for what is smaller than [`BIG`], mappings of their own (in huge
/// pages where they fit) for the rest.
pub struct HugePages<A> {
    inner: A,
    /// Freed large mappings kept for reuse, as (start, length); a length
    /// of 0 is an empty slot.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    kept: std::sync::Mutex<[(usize, usize); KEPT_SLOTS]>,
}

impl<A> HugePages<A> {
    pub const fn new(inner: A) -> HugePages<A> {
        HugePages {
            inner,
            kept: std::sync::Mutex::new([(0, 0); KEPT_SLOTS]),
        }
    }
}

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

/// How much free memory the C allocator keeps at the top of its heaps
/// before it gives memory back to the system (its default: 128 KiB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: usize = 16 << 20;

/// Sets up the C allocator (glibc's malloc, which serves everything below
/// [`BIG`]) for a process that makes and drops many allocations of
/// hundreds of kilobytes: it maps each allocation of 128 KiB or more on
/// its own and gives the top of a thread's heap back to the system each
/// time it is freed (`MADV_DONTNEED`), so every such allocation faulted
/// in and zeroed fresh pages. Allocations below [`BIG`] are now served
/// from its heaps (those of [`BIG`] or more never reach it), and up to
/// [`TRIM_THRESHOLD`] bytes free at a heap's top are kept. Called once,
/// before any thread starts.
pub fn configure_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; no other
    // thread allocates yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, BIG as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int);
    }
}

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
// most a page's alignment, else it goes to `A`), and unmapped (or kept
// whole, then cut to the length of the allocation that reuses them) with
// the length they were mapped with (`mapping_len` of the size the caller
// must hand back). A fresh mapping is zeroed by the system; a kept one is
// zeroed by `alloc_zeroed` before it is handed out.
#[cfg(target_os = "linux")]
unsafe impl<A: GlobalAlloc> GlobalAlloc for HugePages<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::mapped(layout) {
            // SAFETY: forwarded as given.
            return unsafe { self.inner.alloc(layout) };
        }
        self.alloc_mapped(layout).0
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::mapped(layout) {
            // SAFETY: forwarded as given.
            return unsafe { self.inner.alloc_zeroed(layout) };
        }
        let (p, kept) = self.alloc_mapped(layout);
        if kept {
            // SAFETY: `p` holds `layout.size()` bytes.
            unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if Self::mapped(layout) {
            let len = mapping_len(layout.size()).unwrap_or(0);
            remove_mapping(len, layout.size());
            if !self.keep(ptr, len) {
                // SAFETY: `ptr` was mapped by `alloc` with this length.
                unsafe { libc::munmap(ptr.cast(), len) };
            }
        } else {
            // SAFETY: forwarded as given.
            unsafe { self.inner.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` hold for the new one.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (Self::mapped(layout), Self::mapped(new_layout)) {
            // SAFETY: forwarded as given.
            (false, false) => unsafe { self.inner.realloc(ptr, layout, new_size) },
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

    /// A mapping for a large `layout`: a kept one it fits, else a fresh
    /// one; whether it was kept (and so holds old bytes). Null when the
    /// system refuses.
    fn alloc_mapped(&self, layout: Layout) -> (*mut u8, bool) {
        let Some(len) = mapping_len(layout.size()) else {
            return (std::ptr::null_mut(), false);
        };
        let (p, kept) = match self.reuse(len) {
            Some(p) => (p, true),
            // SAFETY: a fresh mapping.
            None => (
                unsafe { map_aligned(len, libc::PROT_READ | libc::PROT_WRITE) },
                false,
            ),
        };
        if !p.is_null() && add_mapping(len, layout.size()) {
            // SAFETY: the mapping just made or taken.
            unsafe { advise_huge(p, len) };
        }
        (p, kept)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, [(usize, usize); KEPT_SLOTS]> {
        // Nothing panics while holding it; a poisoned lock is still sound.
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The shortest kept mapping of at least `len` bytes and at most twice
    /// as many, cut to `len` (its tail unmapped), taken out of the kept.
    fn reuse(&self, len: usize) -> Option<*mut u8> {
        let (start, have) = {
            let mut kept = self.kept();
            let slot = kept
                .iter_mut()
                .filter(|s| s.1 >= len && s.1 / 2 <= len)
                .min_by_key(|s| s.1)?;
            std::mem::take(slot)
        };
        if have > len {
            // SAFETY: the tail of a kept mapping, which nothing refers to.
            unsafe { libc::munmap((start + len) as *mut libc::c_void, have - len) };
        }
        Some(start as *mut u8)
    }

    /// Keeps the freed mapping of `len` bytes at `start` for reuse if
    /// there is room; whether it did.
    fn keep(&self, start: *mut u8, len: usize) -> bool {
        let mut kept = self.kept();
        let held: usize = kept.iter().map(|s| s.1).sum();
        if len == 0 || held + len > KEPT_MAX {
            return false;
        }
        let Some(slot) = kept.iter_mut().find(|s| s.1 == 0) else {
            return false;
        };
        *slot = (start as usize, len);
        true
    }
}

#[cfg(not(target_os = "linux"))]
// SAFETY: forwards everything to `A`.
unsafe impl<A: GlobalAlloc> GlobalAlloc for HugePages<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { self.inner.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { self.inner.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.inner.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { self.inner.realloc(ptr, layout, new_size) }
    }
}

/// How much address space wasmtime reserves for a linear memory
/// (`Config::memory_reservation`, wasmtime's own default on 64-bit
/// systems): all that wasm32 can address, so the memory never moves.
pub const RESERVATION: u64 = 4 << 30;

/// The wasm guest's linear memory, as wasmtime made it, in huge pages.
///
/// wasmtime maps a module's initial memory copy-on-write from its compiled
/// image (the guest's 10 MB of data are not copied at start) only into
/// memories it makes itself, and tells a host nothing of where they are.
/// So after instantiation the memory is found in `/proc/self/maps` by what
/// wasmtime's layout makes unique (`Config::guard_before_linear_memory`):
/// a run of readable and writable mappings exactly as long as the memory,
/// between two inaccessible ones (its guards), one of them the image
/// mapped from a file (the compiled guest, or wasmtime's in-memory copy
/// of its data). Past [`HUGE_FROM`] the whole reservation then asks for
/// huge pages; as the memory grows ([`LinearMemory::growing`], from the
/// store's memory limiter), the 2 MiB range a growth ended in is gathered
/// into one once the memory has grown past it. Where the memory is not
/// found (another layout, another system) it stays in small pages: the
/// process's end is slower, nothing else changes.
pub struct LinearMemory {
    /// Where the memory starts, as an address.
    #[cfg(target_os = "linux")]
    base: usize,
    /// A 2 MiB range a growth ended inside, to gather once it is whole.
    #[cfg(target_os = "linux")]
    pending: Option<usize>,
}

/// The linear memories found and not yet dropped, so that a new instance's
/// memory is not taken for an older one of the same size.
#[cfg(target_os = "linux")]
static FOUND: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

impl LinearMemory {
    /// Finds the linear memory of `size` bytes an instantiation just made
    /// and asks for huge pages over it past [`HUGE_FROM`]. None when it
    /// cannot be told apart.
    #[cfg(target_os = "linux")]
    pub fn find(size: usize) -> Option<LinearMemory> {
        let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
        let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
        let base = find_in_maps(&maps, round_to_page(size)?, &found)?;
        found.push(base);
        let reservation = usize::try_from(RESERVATION).ok()?;
        // SAFETY: inside the reservation wasmtime made for this memory,
        // which lives as long as the store this memory's limiter is in.
        unsafe {
            advise_huge(
                (base + HUGE_FROM) as *mut u8,
                reservation.checked_sub(HUGE_FROM)?,
            )
        };
        Some(LinearMemory {
            base,
            pending: None,
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub fn find(_size: usize) -> Option<LinearMemory> {
        None
    }

    /// The memory, now `current` bytes, is about to grow. The guest grows
    /// it by as little as 64 KiB at a time and uses it at once: the 2 MiB
    /// range it ends inside gets small pages, since a huge page does not
    /// fit in it yet. Once the memory has grown past that range, it is
    /// gathered into one huge page (a copy of at most 2 MiB per 2 MiB
    /// grown; advice only).
    #[cfg(target_os = "linux")]
    pub fn growing(&mut self, current: usize) {
        let end = self.base.saturating_add(current);
        if let Some(range) = self.pending {
            if range + HUGE <= end {
                // SAFETY: accessible memory of this linear memory.
                unsafe { libc::madvise(range as *mut libc::c_void, HUGE, libc::MADV_COLLAPSE) };
                self.pending = None;
            }
        }
        let range = end & !(HUGE - 1);
        if range < end && range >= self.base + HUGE_FROM {
            self.pending = Some(range);
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn growing(&mut self, _current: usize) {}

    /// Where the memory starts (tests).
    #[cfg(all(test, target_os = "linux"))]
    pub fn base(&self) -> usize {
        self.base
    }
}

#[cfg(target_os = "linux")]
impl Drop for LinearMemory {
    fn drop(&mut self) {
        let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
        found.retain(|&b| b != self.base);
    }
}

/// One line of `/proc/self/maps`.
#[cfg(target_os = "linux")]
struct Mapping<'a> {
    start: usize,
    end: usize,
    perms: &'a str,
    /// Empty for anonymous memory, `[heap]` and the like for the kernel's.
    path: &'a str,
}

#[cfg(target_os = "linux")]
fn parse_mapping(line: &str) -> Option<Mapping<'_>> {
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    let path = fields.nth(3).unwrap_or("").trim();
    Some(Mapping {
        start: usize::from_str_radix(start, 16).ok()?,
        end: usize::from_str_radix(end, 16).ok()?,
        perms,
        path,
    })
}

/// Where the one linear memory of `size` bytes (a whole number of pages)
/// starts in `maps`, other than those at `known`: see [`LinearMemory`].
#[cfg(target_os = "linux")]
fn find_in_maps(maps: &str, size: usize, known: &[usize]) -> Option<usize> {
    let maps: Vec<Mapping> = maps.lines().filter_map(parse_mapping).collect();
    let guard = |m: &Mapping| m.perms == "---p" && m.path.is_empty();
    let mut found = None;
    for (i, first) in maps.iter().enumerate() {
        if first.perms != "rw-p" || i == 0 {
            continue;
        }
        let before = &maps[i - 1];
        if !guard(before) || before.end != first.start || known.contains(&first.start) {
            continue;
        }
        let mut end = first.start;
        let mut from_file = false;
        let mut after = None;
        for m in &maps[i..] {
            if m.start != end {
                break;
            }
            if m.perms != "rw-p" {
                after = Some(m);
                break;
            }
            from_file |= !m.path.is_empty() && !m.path.starts_with('[');
            end = m.end;
        }
        if from_file && end - first.start == size && after.is_some_and(guard) {
            if found.is_some() {
                return None;
            }
            found = Some(first.start);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A linear memory is the run of writable mappings between two guards
    /// that is as long as the memory and holds a mapping of a file; one
    /// already found, a run of another length, or two alike, are not it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_linear_memory_is_found_by_its_layout() {
        let maps = "\
55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0002000000 ---p 00000000 00:00 0 
7f0002000000-7f0002100000 rw-p 00000000 00:00 0 
7f0002100000-7f0002b00000 rw-p 0004a000 fd:01 1234                       /home/u/.cache/arbores/guest-1-2.cwasm
7f0002b00000-7f0002c00000 rw-p 00000000 00:00 0 
7f0002c00000-7f0104000000 ---p 00000000 00:00 0 
7f0200000000-7f0200001000 ---p 00000000 00:00 0 
7f0200001000-7f0200a01000 rw-p 00000000 00:00 0 
7f0200a01000-7f0200b01000 ---p 00000000 00:00 0 
";
        let size = 0x7f0002c00000 - 0x7f0002000000;
        assert_eq!(find_in_maps(maps, size, &[]), Some(0x7f0002000000));
        assert_eq!(find_in_maps(maps, size, &[0x7f0002000000]), None);
        assert_eq!(find_in_maps(maps, size + 4096, &[]), None);
        // No file mapping in it: an ordinary guarded allocation.
        assert_eq!(find_in_maps(maps, 0xa00000, &[]), None);
        let memfd = maps.replace(
            "/home/u/.cache/arbores/guest-1-2.cwasm",
            "/memfd:wasm-memory-image (deleted)",
        );
        assert_eq!(find_in_maps(&memfd, size, &[]), Some(0x7f0002000000));
        let twice = format!("{maps}{}", maps.replace("7f00", "7e00"));
        assert_eq!(find_in_maps(&twice, size, &[]), None);
    }

    /// Large and small allocations, growing and shrinking across the
    /// threshold, keep their bytes; large ones start on a page boundary.
    #[test]
    fn allocations_keep_their_bytes_across_the_threshold() {
        let a = HugePages::new(std::alloc::System);
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

    /// A freed large mapping is handed to the next large allocation it
    /// fits (cut to its length), zeroed for `alloc_zeroed`; one too big
    /// for what may be kept, or twice too big for the allocation, is not.
    #[cfg(target_os = "linux")]
    #[test]
    fn freed_mappings_are_kept_for_the_next_that_fits() {
        let a = HugePages::new(std::alloc::System);
        let layout = |n: usize| Layout::from_size_align(n, 8).unwrap();
        unsafe {
            let p = a.alloc(layout(3 << 20));
            std::ptr::write_bytes(p, 5, 3 << 20);
            a.dealloc(p, layout(3 << 20));
            // Twice too big for 1 MiB: not taken.
            let small = a.alloc(layout(1 << 20));
            assert_ne!(small, p);
            // 2.5 MiB fits 3 MiB's mapping: taken, cut, its bytes as left.
            let q = a.alloc(layout(5 << 19));
            assert_eq!(q, p);
            assert_eq!(*q.add((5 << 19) - 1), 5);
            a.dealloc(q, layout(5 << 19));
            let z = a.alloc_zeroed(layout(5 << 19));
            assert_eq!(z, p);
            assert!((0..5 << 19).step_by(4093).all(|i| *z.add(i) == 0));
            a.dealloc(z, layout(5 << 19));
            a.dealloc(small, layout(1 << 20));
            // No more than KEPT_MAX bytes are kept.
            let huge = a.alloc(layout(KEPT_MAX + 1));
            assert!(!a.keep(huge, mapping_len(KEPT_MAX + 1).unwrap()));
            a.dealloc(huge, layout(KEPT_MAX + 1));
        }
    }
}
