//! Numbers as people read them in a status line or a message.

/// `2345` as `2,345`: any integer, written with its thousands grouped.
pub fn grouped(number: impl std::fmt::Display) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && digit.is_ascii_digit() && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped() {
        assert_eq!(super::grouped(1_234_567u64), "1,234,567");
        assert_eq!(super::grouped(999usize), "999");
        assert_eq!(super::grouped(1000u32), "1,000");
        assert_eq!(super::grouped(0), "0");
    }
}
