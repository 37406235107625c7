//! The cap on a tool result's text (and on any text a plugin returns): cut on a character
//! boundary, saying how much was cut.

/// Cuts `text` to at most `max_bytes` (on a character boundary) and says how much was cut.
pub fn cap_text(text: &mut String, max_bytes: usize) {
    if text.len() <= max_bytes {
        return;
    }
    let total = text.len();
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("\n[output cut: {end} of {total} bytes shown]"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_text_cuts_on_a_char_boundary_and_says_so() {
        let mut text = "é".repeat(10);
        cap_text(&mut text, 5);
        assert!(text.starts_with("éé\n"), "{text}");
        assert!(text.ends_with("[output cut: 4 of 20 bytes shown]"), "{text}");
        let mut short = "fine".to_owned();
        cap_text(&mut short, 5);
        assert_eq!(short, "fine");
    }
}
