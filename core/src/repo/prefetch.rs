//! A hint to the processor: bring some bytes into its cache now, because
//! they will be read soon.
//!
//! A lexical search reads thousands of posting blocks from an index of
//! hundreds of megabytes, each block a few cache lines that are not in any
//! cache (docs/PERFORMANCE.md). Read in turn, each block's first bytes wait
//! on memory; asked for a few blocks ahead, they arrive while the blocks
//! before them are decoded. A plain read of those bytes cannot do that: a
//! load that misses holds up the processor once its window of instructions
//! fills, which decoding one block does long before memory answers.
//!
//! This is the only `unsafe` code in the crate (tidy checks that): the
//! instruction reads nothing into the program and cannot fault, whatever
//! the address, so no use of it can be unsound. Where there is no such
//! instruction the hint does nothing.

/// Asks for the cache lines of `bytes`.
#[inline(always)]
pub fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        #[allow(unsafe_code)]
        // SAFETY: `prefetcht0` is a hint: it reads nothing the program
        // sees and raises no fault for any address (and this one is in a
        // live slice). The intrinsic is `unsafe` only because it needs
        // SSE, which every x86_64 processor has.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
