#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| arbores_fuzz::targets::suspension(data));
