//! The connections of a [`super::PostgresStore`], each owned by a thread of its own that
//! takes jobs over a channel.
//!
//! Why threads: the synchronous `postgres` client drives its connection on a runtime of its
//! own, and panics when it is used (or dropped) on a thread that already runs a tokio
//! runtime, which is where the store's callers are. So no `Client` ever leaves its worker:
//! it is made there, used there and dropped there (with the statements prepared on it). The caller blocks on the reply, as it
//! blocks on SQLite's disk writes. A job owns what it needs (the trait's borrowed arguments
//! are copied into it), so a worker never touches the caller's memory.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use postgres::NoTls;

use super::connection::Connection;

use crate::state::store::StoreError;
use crate::unpoisoned::LockUnpoisoned as _;

/// What a worker runs: the work, given the worker's connection or why there is none.
type Job = Box<dyn FnOnce(Result<&mut Connection, StoreError>) + Send>;

pub(super) struct Pool {
    /// `None` once the pool is being dropped, which ends the workers.
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Starts `size` workers, each connecting on its first job (and again after its
    /// connection broke), with `config`; `name` tells the database in errors.
    pub(super) fn start(config: postgres::Config, name: String, size: usize) -> std::io::Result<Self> {
        let (jobs, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let workers = (0..size)
            .map(|index| {
                let (config, name, receiver) = (config.clone(), name.clone(), receiver.clone());
                std::thread::Builder::new()
                    .name(format!("postgres-{index}"))
                    .spawn(move || work(&config, &name, &receiver))
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Self { jobs: Some(jobs), workers })
    }

    /// Runs `work` on a connection and waits for its result.
    pub(super) fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            let _ = reply.send(client.and_then(work));
        });
        let gone = || StoreError::Unavailable("its connection threads have stopped".into());
        self.jobs.as_ref().ok_or_else(gone)?.send(job).map_err(|_| gone())?;
        // A job that panicked drops its reply sender unsent.
        answer.recv().map_err(|_| StoreError::Unavailable("a query panicked".into()))?
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// One worker: takes jobs until the pool is dropped, connecting when it has no live
/// connection.
fn work(config: &postgres::Config, name: &str, jobs: &Mutex<Receiver<Job>>) {
    let mut connection: Option<Connection> = None;
    loop {
        let job = {
            let jobs = jobs.lock_unpoisoned();
            match jobs.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        if connection.as_ref().is_none_or(Connection::is_closed) {
            connection = None;
            match config.connect(NoTls) {
                Ok(connected) => connection = Some(Connection::new(connected)),
                Err(error) => {
                    job(Err(StoreError::Open { path: name.to_owned(), detail: super::with_causes(&error) }));
                    continue;
                }
            }
        }
        job(Ok(connection.as_mut().expect("connected just above")));
    }
}
