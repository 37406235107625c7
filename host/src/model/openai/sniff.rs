//! Telling a streamed reply from a whole one by its first bytes. Some servers and proxies
//! stream server-sent events under another content type (`text/plain`,
//! `application/octet-stream`, none at all), so the header alone is not trusted: only
//! `text/event-stream` is taken at its word, anything else is looked at.

/// What a body's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looks {
    EventStream,
    Whole,
    /// Too few bytes yet to tell.
    Undecided,
}

/// The field names an event stream's first line can start with (or `:`, a comment).
const FIELDS: [&[u8]; 4] = [b"data:", b"event:", b"id:", b"retry:"];

/// What `prefix` (the body's first bytes, however few) looks like.
pub fn looks(prefix: &[u8]) -> Looks {
    let prefix = prefix.strip_prefix("\u{feff}".as_bytes()).unwrap_or(prefix);
    let start = prefix.iter().position(|byte| !byte.is_ascii_whitespace());
    let Some(start) = start else { return Looks::Undecided };
    let rest = &prefix[start..];
    if rest[0] == b':' {
        return Looks::EventStream;
    }
    for field in FIELDS {
        if rest.starts_with(field) {
            return Looks::EventStream;
        }
        if field.starts_with(rest) {
            return Looks::Undecided;
        }
    }
    Looks::Whole
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_told_from_json_by_their_first_bytes() {
        assert_eq!(looks(b"data: {\"choices\":[]}\n\n"), Looks::EventStream);
        assert_eq!(looks(b"\xef\xbb\xbf\r\n: keep-alive\n\n"), Looks::EventStream);
        assert_eq!(looks(b"event: message\n"), Looks::EventStream);
        assert_eq!(looks(b"{\"choices\":[]}"), Looks::Whole);
        assert_eq!(looks(b"<html>"), Looks::Whole);
        assert_eq!(looks(b"  \n"), Looks::Undecided);
        assert_eq!(looks(b"da"), Looks::Undecided);
        assert_eq!(looks(b""), Looks::Undecided);
    }
}
