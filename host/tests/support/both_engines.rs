//! `both_engines!`, shared by the test programs that run the real binary:
//! each function taking the engine's name becomes a module with a `wasm`
//! and a `native` test.

/// Defines `wasm` and `native` tests for a function taking the engine name.
macro_rules! both_engines {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn wasm() {
                super::$name("wasm")
            }
            #[test]
            fn native() {
                super::$name("native")
            }
        }
    )*};
}
