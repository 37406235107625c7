//! The host's side of an MCP session: who it is, that it asks for nothing a server could
//! use to reach back (no sampling, no roots, no elicitation), and what it does with the one
//! notification it acts on — a changed tool list.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{MaybeSendFuture, NotificationContext};
use tokio::sync::Notify;

pub(super) struct Handler {
    /// Woken by `notifications/tools/list_changed`: the server's supervisor lists again.
    pub tools_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-host", env!("CARGO_PKG_VERSION")),
        )
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.tools_changed.notify_one();
        std::future::ready(())
    }
}
