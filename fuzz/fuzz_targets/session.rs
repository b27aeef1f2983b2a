#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arbores_fuzz::keep_last(data);
    arbores_fuzz::targets::session(data)
});
