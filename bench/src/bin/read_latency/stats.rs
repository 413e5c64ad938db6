//! Latency samples and their summary: nearest-rank percentiles, the mean, and the one
//! millisecond format every row of the table uses.

use std::time::Duration;

/// Per-call latencies of one measurement.
#[derive(Debug, Clone, Default)]
pub(crate) struct Samples {
    values: Vec<Duration>,
}

impl Samples {
    pub(crate) fn with_capacity(capacity: usize) -> Samples {
        Samples { values: Vec::with_capacity(capacity) }
    }

    pub(crate) fn push(&mut self, value: Duration) {
        self.values.push(value);
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The nearest-rank percentile `q` (0 < q ≤ 1); zero when there are no samples.
    pub(crate) fn percentile(&self, q: f64) -> Duration {
        if self.values.is_empty() {
            return Duration::ZERO;
        }
        let mut sorted = self.values.clone();
        sorted.sort_unstable();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    pub(crate) fn p50(&self) -> Duration {
        self.percentile(0.50)
    }

    pub(crate) fn p99(&self) -> Duration {
        self.percentile(0.99)
    }

    pub(crate) fn mean(&self) -> Duration {
        if self.values.is_empty() {
            return Duration::ZERO;
        }
        self.values.iter().sum::<Duration>() / self.values.len() as u32
    }
}

/// Milliseconds with microsecond resolution, e.g. `0.412 ms`.
pub(crate) fn ms(value: Duration) -> String {
    format!("{:.3} ms", value.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut samples = Samples::default();
        for micros in 1..=100 {
            samples.push(Duration::from_micros(micros));
        }
        assert_eq!(samples.p50(), Duration::from_micros(50));
        assert_eq!(samples.p99(), Duration::from_micros(99));
        assert_eq!(samples.percentile(1.0), Duration::from_micros(100));
        assert_eq!(samples.mean(), Duration::from_nanos(50_500));
        assert_eq!(Samples::default().p50(), Duration::ZERO);
        assert_eq!(ms(Duration::from_micros(412)), "0.412 ms");
    }
}
