//! The connections of a [`super::PostgresStore`]: a `deadpool` pool of `tokio-postgres`
//! clients whose connections all live on one thread of the store's own, which runs a tokio
//! runtime for them alone.
//!
//! Why a thread of its own: a `tokio-postgres` connection is a task that must be polled for
//! its client to get answers, and a task dies with the runtime it was spawned on. The store
//! is used from many runtimes (the host's, a test's `current_thread` one that ends with the
//! test) and from plain threads (the lease keeper, a `Drop`), so no caller's runtime can own
//! the connections. The client side is runtime-agnostic (it talks to its connection over
//! channels), so a caller on any runtime awaits its queries there, and a caller that does
//! not await waits on its own thread ([`crate::state::wait`]) while the store's thread does
//! the I/O. One pool serves both.
//!
//! Lifecycle: the pool is made with the store and dropped with it; dropping it ends every
//! connection's task, then the thread's runtime is stopped and the thread joined, so a
//! dropped store leaves no task, connection or thread behind, whatever runtime (or none)
//! dropped it.

use std::future::Future;
use std::pin::Pin;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;

use crate::state::store::StoreError;

/// A client from the pool, returned to it when dropped.
pub(super) type Client = deadpool_postgres::Object;

pub(super) struct Pool {
    // Dropped before the thread: the connections' tasks end with their clients.
    clients: Clients,
    /// Kept for its `Drop`, which stops the thread once the connections are gone.
    io: IoThread,
}

/// What hands out the pool's clients; cheap to clone into a task of the store's thread.
#[derive(Clone)]
pub(super) struct Clients {
    pool: deadpool_postgres::Pool,
    /// The database, for errors.
    name: std::sync::Arc<str>,
}

impl Pool {
    /// A pool of at most `size` connections to the database `config` names (`name` in
    /// errors), each connected when first needed and again after it broke.
    pub(super) fn start(config: tokio_postgres::Config, name: &str, size: usize) -> std::io::Result<Self> {
        let thread = IoThread::start()?;
        let connect = OnIoThread { runtime: thread.handle.clone() };
        // A broken connection is closed, which `Fast` sees; a query to find out would be a
        // round trip per use.
        let manager =
            Manager::from_connect(config, connect, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(size)
            .build()
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        Ok(Self { clients: Clients { pool, name: name.into() }, io: thread })
    }

    /// A client, waiting for one while all are in use.
    pub(super) async fn get(&self) -> Result<Client, StoreError> {
        self.clients.get().await
    }

    /// Runs `work` as a task of the store's thread and answers with what it answers.
    ///
    /// What a caller's runtime awaits goes this way, so that a pooled client is only ever held
    /// by a task of the store's thread or by a thread waiting for its own call
    /// ([`crate::state::wait`]), both of which always make progress. A client held by a task
    /// of the caller's runtime would be held for as long as that task waits to be polled —
    /// forever, once every worker of that runtime is blocked in a synchronous method waiting
    /// for a client.
    pub(super) async fn run<T, F>(&self, work: impl FnOnce(Clients) -> F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        finished(self.io.handle.spawn(work(self.clients.clone()))).await
    }
}

/// What a task of the store's thread answered; its panic, resumed here.
async fn finished<T>(task: JoinHandle<T>) -> T {
    match task.await {
        Ok(answer) => answer,
        Err(joined) => match joined.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // The runtime stops only when the store is dropped, which no call borrowing it
            // (this one included) outlives.
            Err(_) => unreachable!("the store's thread stopped while a call ran on it"),
        },
    }
}

impl Clients {
    /// A client, waiting for one while all are in use.
    pub(super) async fn get(&self) -> Result<Client, StoreError> {
        self.pool.get().await.map_err(|error| match error {
            deadpool_postgres::PoolError::Backend(error) => {
                StoreError::Open { path: self.name.to_string(), detail: super::with_causes(&error) }
            }
            other => StoreError::Unavailable(format!("{}: {other}", self.name)),
        })
    }
}

/// The thread the connections live on, and its runtime.
struct IoThread {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl IoThread {
    fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name("postgres-io".into()).spawn(move || {
            runtime.block_on(async {
                let _ = stopped.await;
            });
            // The runtime is dropped here, off any other runtime: what is left of its tasks
            // (connections whose clients were dropped meanwhile) is cancelled.
        })?;
        Ok(Self { handle, stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Connects on the store's thread, so that the socket and the connection's task belong to
/// its runtime however the caller runs.
struct OnIoThread {
    runtime: Handle,
}

impl deadpool_postgres::Connect for OnIoThread {
    fn connect(
        &self,
        config: &tokio_postgres::Config,
    ) -> Pin<
        Box<
            dyn Future<Output = Result<(tokio_postgres::Client, JoinHandle<()>), tokio_postgres::Error>>
                + Send
                + '_,
        >,
    > {
        let config = config.clone();
        let connecting = self.runtime.spawn(async move {
            let (client, connection) = config.connect(NoTls).await?;
            let task = tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!("a session store connection ended: {}", super::with_causes(&error));
                }
            });
            Ok((client, task))
        });
        Box::pin(finished(connecting))
    }
}
