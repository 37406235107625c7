//! Times as a person reads them: how long ago, not a Unix timestamp.

use std::time::{Duration, SystemTime};

/// `elapsed` as "5 s ago", "3 min ago", "2 h ago", "4 d ago".
pub fn ago(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    match seconds {
        0..60 => format!("{seconds} s ago"),
        60..3_600 => format!("{} min ago", seconds / 60),
        3_600..86_400 => format!("{} h ago", seconds / 3_600),
        _ => format!("{} d ago", seconds / 86_400),
    }
}

/// How long ago `at` was; a time in the future (a clock set back) reads as "0 s ago".
pub fn since(at: SystemTime) -> String {
    ago(SystemTime::now().duration_since(at).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_span_reads_in_its_own_unit_rounded_down() {
        let ago_s = |seconds| ago(Duration::from_secs(seconds));
        assert_eq!(ago_s(0), "0 s ago");
        assert_eq!(ago_s(59), "59 s ago");
        assert_eq!(ago_s(60), "1 min ago");
        assert_eq!(ago_s(3_599), "59 min ago");
        assert_eq!(ago_s(3_600), "1 h ago");
        assert_eq!(ago_s(86_399), "23 h ago");
        assert_eq!(ago_s(2 * 86_400 + 5), "2 d ago");
        assert_eq!(since(SystemTime::now() + Duration::from_secs(30)), "0 s ago");
    }
}
