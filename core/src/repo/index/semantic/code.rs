//! 8-bit codes of vectors: what the graph navigates by.

/// Dot product of two 8-bit codes. Blocks of at most 2^16 components
/// cannot overflow 32 bits (2^16 products of at most 127², under 2^30), so
/// a code of any length is summed block by block.
pub(super) fn dot_i8(a: &[i8], b: &[i8]) -> i64 {
    const BLOCK: usize = 1 << 16;
    if a.len() <= BLOCK {
        return i64::from(dot_i8_block(a, b));
    }
    a.chunks(BLOCK)
        .zip(b.chunks(BLOCK))
        .map(|(a, b)| i64::from(dot_i8_block(a, b)))
        .sum()
}

/// `dot_i8` of at most 2^16 components, in sixteen 32-bit lanes (the
/// compiler turns it into multiply-add instructions on pairs of 16-bit
/// values).
#[inline(always)]
fn dot_i8_block(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let ca = a.chunks_exact(16);
    let cb = b.chunks_exact(16);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// A vector's 8-bit code: `v[i] ≈ code[i] × scale`, with the largest
/// component at ±127. The dot product of two codes times both scales
/// approximates the dot product of the vectors to about 1% of their norms;
/// the graph navigates by it, and nothing it computes is ever a score.
#[derive(Debug)]
pub(super) struct Code {
    pub(super) code: Vec<i8>,
    pub(super) scale: f32,
}

impl Code {
    pub(super) fn new(v: &[f32]) -> Code {
        let mut code = vec![0i8; v.len()];
        let scale = quantise(v, &mut code);
        Code { code, scale }
    }

    pub(super) fn view(&self) -> CodeRef<'_> {
        CodeRef {
            code: &self.code,
            scale: self.scale,
        }
    }
}

#[derive(Clone, Copy)]
pub(super) struct CodeRef<'a> {
    pub(super) code: &'a [i8],
    pub(super) scale: f32,
}

impl CodeRef<'_> {
    /// 1 − approximate cosine: smaller is nearer.
    pub(super) fn distance(self, other: CodeRef<'_>) -> f32 {
        1.0 - dot_i8(self.code, other.code) as f32 * self.scale * other.scale
    }
}

/// Writes `v`'s code into `out` (of the same length); returns its scale.
/// A zero or non-finite vector has the zero code and scale 0.
pub(super) fn quantise(v: &[f32], out: &mut [i8]) -> f32 {
    let max = v.iter().fold(0f32, |m, &x| m.max(x.abs()));
    if !(max > 0.0 && max.is_finite()) {
        out.fill(0);
        return 0.0;
    }
    let k = 127.0 / max;
    for (o, &x) in out.iter_mut().zip(v) {
        // In range by construction; `as` saturates anyway.
        *o = (x * k).round() as i8;
    }
    1.0 / k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::index::embed::{Embedder, HashingEmbedder};
    use crate::repo::index::vector::dot;

    #[test]
    fn codes_approximate_the_dot_product() {
        let e = HashingEmbedder::default();
        let texts = [
            "quick sort of a vector",
            "sorting algorithm for lists",
            "快速排序实现",
            "归并排序算法",
            "Parse a JSON document into nested lists and vectors of numbers",
        ];
        let vecs: Vec<Vec<f32>> = texts.iter().map(|t| e.embed(t)).collect();
        for a in &vecs {
            for b in &vecs {
                let (ca, cb) = (Code::new(a), Code::new(b));
                let approx = 1.0 - ca.view().distance(cb.view());
                assert!((approx - dot(a, b)).abs() < 0.02, "{approx} {}", dot(a, b));
            }
        }
        // The largest component becomes ±127.
        let c = Code::new(&[0.6, -0.8, 0.0]);
        assert_eq!(c.code, vec![95, -127, 0]);
        assert!((c.scale - 0.8 / 127.0).abs() < 1e-7);
        // Nothing to scale: the zero code, which is at distance 1 from all.
        for v in [[0.0f32; 3], [f32::NAN; 3], [f32::INFINITY, 0.0, 0.0]] {
            let z = Code::new(&v);
            assert_eq!((z.code.clone(), z.scale), (vec![0, 0, 0], 0.0));
            assert_eq!(z.view().distance(c.view()), 1.0);
        }
        assert_eq!(dot_i8(&[1; 37], &[-2; 37]), -74);
        // Long enough to overflow 32 bits.
        let long = vec![127i8; 200_000];
        assert_eq!(dot_i8(&long, &long), 127 * 127 * 200_000);
    }
}
