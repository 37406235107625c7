use std::fmt;
use std::path::PathBuf;

/// A config file that cannot be used, with where and why.
#[derive(Debug, thiserror::Error)]
pub struct ConfigError {
    pub file: PathBuf,
    /// 1-based; absent when the problem is the file as a whole.
    pub line: Option<usize>,
    /// The field, as a dotted path where known (`plugin[2].limits.timeout_ms`).
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if let Some(field) = &self.field {
            write!(f, "`{field}`: ")?;
        }
        f.write_str(&self.message)
    }
}
