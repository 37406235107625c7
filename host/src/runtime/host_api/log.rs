//! `log.write`.

use crate::runtime::call::CallState;

/// A log line's level, as every contract version names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

impl CallState {
    pub fn log(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        self.caps.log(message.len())?;
        let plugin = &*self.plugin;
        // The log goes to the operator's terminal: a plugin's text must not steer it.
        let message = crate::sanitize::one_line(&message);
        match level {
            Level::Trace => tracing::trace!(target: "plugin", %plugin, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", %plugin, "{message}"),
            Level::Info => tracing::info!(target: "plugin", %plugin, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", %plugin, "{message}"),
            Level::Error => tracing::error!(target: "plugin", %plugin, "{message}"),
        }
        Ok(())
    }
}
