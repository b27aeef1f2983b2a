//! Panic reporting.
//!
//! The `wasm` profile aborts on panic, which JavaScript sees only as an opaque
//! `RuntimeError: unreachable`. The hook below keeps the panic's text so the
//! host can say what actually went wrong, and logs it to the console.

use std::sync::Mutex;
use wasm_bindgen::prelude::*;

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(text: &str);
}

/// Installs the hook once; later calls do nothing.
pub(crate) fn install_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let text = info.to_string();
            // try_lock: a panic while the lock is held must not deadlock the hook.
            if let Ok(mut slot) = LAST_PANIC.try_lock() {
                *slot = Some(text.clone());
            }
            #[cfg(target_arch = "wasm32")]
            console_error(&format!("arbores: {text}"));
        }));
    });
}

/// The text of the last Rust panic, if any: call it after an engine call threw
/// (an abort shows up in JavaScript as `RuntimeError: unreachable`). After a
/// panic the module's state is not trustworthy; start a new one.
#[wasm_bindgen(js_name = panicMessage)]
pub fn panic_message() -> Option<String> {
    LAST_PANIC.try_lock().ok().and_then(|slot| slot.clone())
}
