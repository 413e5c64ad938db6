//! Percentiles and the number formats the tables use.

use std::time::Duration;

/// The nearest-rank percentile `p` (0..=100) of `samples`; `None` when there are none.
pub(crate) fn percentile(samples: &[f64], p: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

pub(crate) fn p50(samples: &[f64]) -> Option<f64> {
    percentile(samples, 50.0)
}

pub(crate) fn p95(samples: &[f64]) -> Option<f64> {
    percentile(samples, 95.0)
}

pub(crate) fn max(samples: &[f64]) -> Option<f64> {
    samples.iter().copied().reduce(f64::max)
}

pub(crate) fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Milliseconds, with as many decimals as are meaningful: `0.42 ms`, `12.3 ms`, `4.56 s`.
pub(crate) fn ms(value: Option<f64>) -> String {
    match value {
        None => "—".to_owned(),
        Some(v) if v >= 1000.0 => format!("{:.2} s", v / 1000.0),
        Some(v) if v >= 100.0 => format!("{v:.0} ms"),
        Some(v) if v >= 10.0 => format!("{v:.1} ms"),
        Some(v) => format!("{v:.2} ms"),
    }
}

/// Bytes as MB (10^6) or GB.
pub(crate) fn bytes(value: u64) -> String {
    let mb = value as f64 / 1e6;
    if mb >= 1000.0 { format!("{:.2} GB", mb / 1000.0) } else { format!("{mb:.1} MB") }
}

pub(crate) fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// A thousands-separated count.
pub(crate) fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, c) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let samples = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(p50(&samples), Some(3.0));
        assert_eq!(p95(&samples), Some(5.0));
        assert_eq!(percentile(&[7.0], 50.0), Some(7.0));
        assert_eq!(p50(&[]), None);
    }

    #[test]
    fn formats() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(ms(Some(1234.0)), "1.23 s");
        assert_eq!(ms(Some(0.5)), "0.50 ms");
        assert_eq!(bytes(1_500_000), "1.5 MB");
    }
}
