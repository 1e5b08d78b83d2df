//! Pearson's correlation for the start-clock probes, gathered in one pass and pooled within groups.

/// Sums of pairs (x, y) for their correlation, gathered in one pass.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pairs {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    yy: f64,
    xy: f64,
}

impl Pairs {
    /// The pairs of `xs` and `ys`, element by element.
    pub(super) fn of(xs: &[f64], ys: &[f64]) -> Pairs {
        let mut pairs = Pairs::default();
        for (&x, &y) in xs.iter().zip(ys) {
            pairs.add(x, y);
        }
        pairs
    }

    /// Adds the pair (x, y).
    pub(super) fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        (self.x, self.y) = (self.x + x, self.y + y);
        (self.xx, self.yy, self.xy) = (self.xx + x * x, self.yy + y * y, self.xy + x * y);
    }

    /// The sums of squares and products about the pairs' own means.
    pub(super) fn centred(&self) -> Centred {
        if self.n < 2.0 {
            return Centred::default();
        }
        Centred {
            xx: self.xx - self.x * self.x / self.n,
            yy: self.yy - self.y * self.y / self.n,
            xy: self.xy - self.x * self.y / self.n,
        }
    }

    /// Pearson's correlation; `None` when x or y does not vary.
    pub(super) fn correlation(&self) -> Option<f64> {
        self.centred().correlation()
    }
}

/// Sums of squares and products about means. Groups' sums added together, each about its own means,
/// give the correlation pooled within the groups (what varies between their means left out).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Centred {
    xx: f64,
    yy: f64,
    xy: f64,
}

impl Centred {
    /// Adds another group's sums.
    pub(super) fn add(&mut self, other: Centred) {
        (self.xx, self.yy, self.xy) = (self.xx + other.xx, self.yy + other.yy, self.xy + other.xy);
    }

    /// Pearson's correlation; `None` when x or y does not vary.
    pub(super) fn correlation(&self) -> Option<f64> {
        (self.xx > 1e-9 && self.yy > 1e-9).then(|| self.xy / (self.xx * self.yy).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlation_is_one_for_a_line_and_none_for_a_constant() {
        let r = |xs: &[f64], ys: &[f64]| Pairs::of(xs, ys).correlation();
        assert!((r(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((r(&[1.0, 2.0, 3.0], &[6.0, 4.0, 2.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(r(&[1.0, 1.0, 1.0], &[2.0, 4.0, 6.0]), None);
        assert_eq!(r(&[1.0], &[2.0]), None);
    }

    #[test]
    fn pooled_within_groups_the_difference_of_their_means_does_not_count() {
        // Each group a perfect line, but the second sits far above the first: pooled within the
        // groups the correlation is 1; the pairs taken together, it is not.
        let (a, b) = (
            Pairs::of(&[0.0, 1.0], &[0.0, 1.0]),
            Pairs::of(&[0.0, 1.0], &[10.0, 11.0]),
        );
        let mut pooled = a.centred();
        pooled.add(b.centred());
        assert!((pooled.correlation().unwrap() - 1.0).abs() < 1e-12);
        let together = Pairs::of(&[0.0, 1.0, 0.0, 1.0], &[0.0, 1.0, 10.0, 11.0]);
        assert!(together.correlation().unwrap() < 0.2);
    }
}
