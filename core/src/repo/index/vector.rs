//! `StoredVector`: a unit embedding as the semantic index keeps it.
//!
//! The built-in embedder hashes a description's few dozen features into
//! 256 dimensions, so most components are zero. Such a vector is kept
//! sparse, as (component, value) pairs: a fifth of the dense size, which at
//! a million nodes is the difference between about 0.2 and 1 GiB, and a
//! dot product with a dense query that reads only the non-zero components.
//! A host model's dense vectors are kept dense. Either way the values are
//! the exact f32 components, so a score does not depend on the form.

/// A normalised, non-zero embedding.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredVector(Repr);

#[derive(Clone, Debug, PartialEq)]
enum Repr {
    Dense(Box<[f32]>),
    /// Ascending component index, non-zero value.
    Sparse {
        dim: u32,
        pairs: Box<[(u32, f32)]>,
    },
}

impl StoredVector {
    /// Keeps `v` (already checked and normalised) in the smaller form: a
    /// pair takes two components' room, so sparse pays below half full.
    pub fn new(v: &[f32]) -> StoredVector {
        let non_zero = v.iter().fold(0, |n, &x| n + usize::from(x != 0.0));
        match u32::try_from(v.len()) {
            Ok(dim) if non_zero * 2 <= v.len() => {
                let mut pairs = Vec::with_capacity(non_zero);
                for (i, &x) in v.iter().enumerate() {
                    if x != 0.0 {
                        pairs.push((i as u32, x));
                    }
                }
                StoredVector(Repr::Sparse {
                    dim,
                    pairs: pairs.into_boxed_slice(),
                })
            }
            _ => StoredVector(Repr::Dense(v.into())),
        }
    }

    /// Number of components.
    pub fn dim(&self) -> usize {
        match &self.0 {
            Repr::Dense(v) => v.len(),
            Repr::Sparse { dim, .. } => *dim as usize,
        }
    }

    pub fn is_sparse(&self) -> bool {
        matches!(self.0, Repr::Sparse { .. })
    }

    /// The dot product with a dense vector `q` of the same dimension
    /// (missing components of a shorter `q` count as zero).
    pub fn dot(&self, q: &[f32]) -> f32 {
        match &self.0 {
            Repr::Dense(v) => dot(q, v),
            Repr::Sparse { pairs, .. } => pairs
                .iter()
                .map(|&(i, x)| q.get(i as usize).copied().unwrap_or(0.0) * x)
                .sum(),
        }
    }

    /// Writes the dense form into `out` (zeroed first; components beyond
    /// `out` are dropped).
    pub fn write_dense(&self, out: &mut [f32]) {
        match &self.0 {
            Repr::Dense(v) => {
                for (o, x) in out.iter_mut().zip(v.iter().chain(std::iter::repeat(&0.0))) {
                    *o = *x;
                }
            }
            Repr::Sparse { pairs, .. } => {
                out.fill(0.0);
                for &(i, x) in pairs.iter() {
                    if let Some(o) = out.get_mut(i as usize) {
                        *o = x;
                    }
                }
            }
        }
    }

    pub fn to_dense(&self) -> Vec<f32> {
        let mut v = vec![0.0; self.dim()];
        self.write_dense(&mut v);
        v
    }

    /// Bytes held on the heap (for the benchmark's memory figures).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Dense(v) => std::mem::size_of_val(&**v),
            Repr::Sparse { pairs, .. } => std::mem::size_of_val(&**pairs),
        }
    }
}

/// Dot product in eight independent lanes, which the compiler vectorises.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_below_half_dense_above() {
        let mut v = vec![0.0f32; 16];
        v[3] = 0.6;
        v[11] = -0.8;
        let s = StoredVector::new(&v);
        assert!(s.is_sparse());
        assert_eq!(s.dim(), 16);
        assert_eq!(s.to_dense(), v);
        assert_eq!(s.heap_bytes(), 16);
        let full: Vec<f32> = (0..16).map(|i| (i as f32 + 1.0) / 40.0).collect();
        let d = StoredVector::new(&full);
        assert!(!d.is_sparse());
        assert_eq!(d.to_dense(), full);
    }

    #[test]
    fn dot_is_the_same_in_both_forms_up_to_rounding() {
        let mut v = vec![0.0f32; 64];
        for (i, x) in v.iter_mut().enumerate().step_by(5) {
            *x = (i as f32).sin();
        }
        let q: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).cos()).collect();
        let sparse = StoredVector::new(&v);
        let dense = StoredVector(Repr::Dense(v.clone().into()));
        assert!(sparse.is_sparse());
        assert!((sparse.dot(&q) - dense.dot(&q)).abs() < 1e-5);
        // A short query counts missing components as zero.
        assert!((sparse.dot(&q[..10]) - dot(&q[..10], &v[..10])).abs() < 1e-6);
        let mut out = vec![9.0; 70];
        sparse.write_dense(&mut out);
        assert_eq!(&out[..64], &v[..]);
        assert!(out[64..].iter().all(|&x| x == 0.0));
    }
}
