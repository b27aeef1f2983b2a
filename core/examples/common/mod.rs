//! What the benchmark examples share.

/// The sizes to measure at: the arguments that are numbers, or `default`
/// when none is.
pub fn sizes<T: std::str::FromStr + Copy>(default: &[T]) -> Vec<T> {
    let named: Vec<T> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if named.is_empty() {
        default.to_vec()
    } else {
        named
    }
}
