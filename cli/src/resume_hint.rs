//! What the console says as it closes: the command that opens the same session again, ready
//! to paste into a shell.

use std::path::Path;

/// `agent-host --config FILE --session ID`, each word quoted for a POSIX shell when it must be.
pub fn resume_command(config: &Path, session_id: &str) -> String {
    format!(
        "agent-host --config {} --session {}",
        shell_word(&config.to_string_lossy()),
        shell_word(session_id)
    )
}

/// `word` as one shell word: as it is when it holds only characters no shell treats
/// specially, in single quotes otherwise (a quote inside written `'\''`). Escapes are for
/// the terminal: the caller escapes the line it prints.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ':' | ',' | '@'));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_pastes_as_one_word_per_argument() {
        assert_eq!(
            resume_command(Path::new("config.toml"), "0f3a-12"),
            "agent-host --config config.toml --session 0f3a-12"
        );
        assert_eq!(
            resume_command(Path::new("/home/me/my deployment/it's.toml"), "abc"),
            r"agent-host --config '/home/me/my deployment/it'\''s.toml' --session abc"
        );
        assert_eq!(
            resume_command(Path::new("$HOME/x.toml"), "a;b"),
            "agent-host --config '$HOME/x.toml' --session 'a;b'"
        );
    }
}
