//! Order statistics the benchmarks report.
//!
//! Level: `cli`, a leaf: depends on nothing else in the crate.

/// The `q` quantile (nearest rank: index `round((n - 1) q)` of the sorted values) of
/// `values`; the default value when there are none.
pub fn quantile_of<T: Ord + Copy + Default>(values: &[T], q: f64) -> T {
    let mut t = values.to_vec();
    t.sort_unstable();
    if t.is_empty() {
        return T::default();
    }
    let i = ((t.len() as f64 - 1.0) * q).round() as usize;
    t[i.min(t.len() - 1)]
}

/// Sorts timings (milliseconds) so that [`percentile_sorted`] can read them.
pub fn sort_times(values: &mut [f64]) {
    values.sort_by(f64::total_cmp);
}

/// The value at rank `n * percent / 100` (clamped to the last) of sorted timings; `None`
/// when there are none.
pub fn percentile_sorted(sorted: &[f64], percent: usize) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    sorted
        .get((sorted.len() * percent / 100).min(last))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_rank() {
        assert_eq!(quantile_of(&[5u64, 1, 3], 0.5), 3);
        assert_eq!(quantile_of(&[5u64, 1, 3], 1.0), 5);
        assert_eq!(quantile_of::<u64>(&[], 0.5), 0);
        let mut t = vec![4.0, 1.0, 3.0, 2.0];
        sort_times(&mut t);
        assert_eq!(percentile_sorted(&t, 50), Some(3.0));
        assert_eq!(percentile_sorted(&t, 99), Some(4.0));
        assert_eq!(percentile_sorted(&[], 50), None);
    }
}
