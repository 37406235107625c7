//! Waiting for a future on a thread that does not await: a store's synchronous methods run
//! their asynchronous twins this way, and a commit whose caller stopped awaiting it is
//! finished this way (see `Session`), so that what reached the store is known.
//!
//! It parks the calling thread until the future is woken, so the future must make its
//! progress elsewhere (a database connection driven by a thread of its own): never in a task
//! the waiting thread would have to run. Tokio's cooperative budget is lifted
//! for it: on a runtime worker, a spent budget would make a tokio channel answer "not yet"
//! again and again to a wait that never yields.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// Polls `future` on this thread until it is ready, parked in between.
pub(crate) fn wait<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(tokio::task::unconstrained(future));
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        // A wake that came before this park makes it return at once.
        std::thread::park();
    }
}

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_woken_from_another_thread_is_waited_for() {
        let (send, receive) = tokio::sync::oneshot::channel();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            send.send(7).unwrap();
        });
        assert_eq!(wait(receive).unwrap(), 7);
        sender.join().unwrap();
    }

    /// As a store's synchronous method is called from a task: the wait blocks the worker,
    /// which the future does not need.
    #[tokio::test]
    async fn a_tokio_channel_is_waited_for_on_a_runtime_worker() {
        let (send, receive) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || send.send(1).unwrap());
        assert_eq!(wait(receive).unwrap(), 1);
    }
}
