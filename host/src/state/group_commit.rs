//! Many writers, one transaction (group commit). A store whose commit costs the same whether
//! it writes one step or ten — SQLite's transaction and the pages it appends to the WAL —
//! lets the steps that arrive while one commit runs share the next.
//!
//! There is no committing thread and no timer. A writer that finds nobody committing commits
//! at once, on its own thread, whatever is queued (its own step, when alone: no added wait);
//! one that finds a commit running queues its step and is woken with its answer, or, if the
//! commit that ran did not take its step, to commit the next batch itself. Each step is
//! durable when its own future answers, so a turn's next model call still follows its step.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use super::store::StoreError;
use crate::unpoisoned::LockUnpoisoned as _;

/// What writes a batch.
pub(super) trait Committer: Sync {
    type Job: Send;
    /// Writes `jobs` in one transaction, each of them all or nothing; answers each, in order.
    fn commit_batch(&self, jobs: Vec<Self::Job>) -> Vec<Result<(), StoreError>>;
}

/// The queue of one store's writers.
pub(super) struct GroupCommit<J> {
    queue: Mutex<Queue<J>>,
}

struct Queue<J> {
    /// Steps waiting for the next batch, by ticket.
    waiting: Vec<(u64, J)>,
    /// Answers not yet taken by their futures.
    answers: HashMap<u64, Result<(), StoreError>>,
    /// Futures to wake when the running batch ends.
    wakers: HashMap<u64, Waker>,
    /// Tickets in the running batch whose futures were dropped: their answers are not kept.
    abandoned: Vec<u64>,
    committing: bool,
    next_ticket: u64,
}

impl<J> Default for GroupCommit<J> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(Queue {
                waiting: Vec::new(),
                answers: HashMap::new(),
                wakers: HashMap::new(),
                abandoned: Vec::new(),
                committing: false,
                next_ticket: 0,
            }),
        }
    }
}

impl<J: Send> GroupCommit<J> {
    /// Queues `job` and answers once it is committed (or refused), by `committer`.
    pub(super) fn commit<'a, C: Committer<Job = J>>(&'a self, committer: &'a C, job: J) -> Commit<'a, C> {
        let mut queue = self.queue.lock_unpoisoned();
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        queue.waiting.push((ticket, job));
        Commit { group: self, committer, ticket, answered: false }
    }
}

/// One writer's step on its way into a batch.
pub(super) struct Commit<'a, C: Committer> {
    group: &'a GroupCommit<C::Job>,
    committer: &'a C,
    ticket: u64,
    answered: bool,
}

impl<C: Committer> Future for Commit<'_, C> {
    type Output = Result<(), StoreError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let mut queue = self.group.queue.lock_unpoisoned();
        if let Some(answer) = queue.answers.remove(&self.ticket) {
            self.answered = true;
            return Poll::Ready(answer);
        }
        if queue.committing {
            queue.wakers.insert(self.ticket, context.waker().clone());
            return Poll::Pending;
        }
        queue.committing = true;
        drop(queue);
        let leading = Leading(self.group);
        // Steps queued while a batch is written are written next by the same writer, rather
        // than wait for one of theirs to be polled again to lead (behind every other task of
        // its runtime); a few rounds at most, so that this writer's own turn goes on.
        for _ in 0..ROUNDS {
            let (tickets, jobs): (Vec<u64>, Vec<C::Job>) =
                std::mem::take(&mut self.group.queue.lock_unpoisoned().waiting).into_iter().unzip();
            if jobs.is_empty() {
                break;
            }
            let mut running = Running { group: self.group, tickets, answers: None };
            running.answers = Some(self.committer.commit_batch(jobs));
        }
        drop(leading);
        let answer = self.group.queue.lock_unpoisoned().answers.remove(&self.ticket);
        self.answered = true;
        Poll::Ready(
            answer.unwrap_or_else(|| Err(StoreError::Unavailable("a batch left a step unanswered".into()))),
        )
    }
}

impl<C: Committer> Drop for Commit<'_, C> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let mut queue = self.group.queue.lock_unpoisoned();
        queue.wakers.remove(&self.ticket);
        if queue.answers.remove(&self.ticket).is_some() {
            return;
        }
        let before = queue.waiting.len();
        queue.waiting.retain(|(ticket, _)| *ticket != self.ticket);
        if queue.waiting.len() == before {
            // In the running batch: what it answers is for nobody.
            queue.abandoned.push(self.ticket);
        }
    }
}

/// Batches one writer commits in a row at most.
const ROUNDS: usize = 4;

/// The batch being committed: whatever ends it — its answers, or a panic in the committer —
/// hands the answers out and wakes the writers they belong to.
struct Running<'a, J> {
    group: &'a GroupCommit<J>,
    tickets: Vec<u64>,
    answers: Option<Vec<Result<(), StoreError>>>,
}

impl<J> Drop for Running<'_, J> {
    fn drop(&mut self) {
        let mut answers = self.answers.take().unwrap_or_default().into_iter();
        let mut queue = self.group.queue.lock_unpoisoned();
        let mut woken = Vec::with_capacity(self.tickets.len());
        for ticket in self.tickets.drain(..) {
            let answer = answers
                .next()
                .unwrap_or_else(|| Err(StoreError::Unavailable("the batch this step was in failed".into())));
            if let Some(at) = queue.abandoned.iter().position(|abandoned| *abandoned == ticket) {
                queue.abandoned.swap_remove(at);
                continue;
            }
            queue.answers.insert(ticket, answer);
            woken.extend(queue.wakers.remove(&ticket));
        }
        drop(queue);
        for waker in woken {
            waker.wake();
        }
    }
}

/// A writer committing for the others: however it stops — done, or a panic in the committer
/// — it lets go of the queue and wakes the writers still waiting, one of whom commits next.
struct Leading<'a, J>(&'a GroupCommit<J>);

impl<J> Drop for Leading<'_, J> {
    fn drop(&mut self) {
        let mut queue = self.0.queue.lock_unpoisoned();
        queue.committing = false;
        let woken: Vec<Waker> = queue.wakers.drain().map(|(_, waker)| waker).collect();
        drop(queue);
        for waker in woken {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    use super::*;
    use crate::state::wait::wait;

    /// Records each batch (its jobs and the thread that wrote it); a job below zero is refused.
    /// The first batch waits at `gate` (when set) until the test lets it go.
    #[derive(Default)]
    struct Recorder {
        batches: Mutex<Vec<(Vec<i64>, std::thread::ThreadId)>>,
        gate: Option<(Arc<Barrier>, Arc<Barrier>)>,
        first: AtomicUsize,
    }

    impl Committer for Recorder {
        type Job = i64;
        fn commit_batch(&self, jobs: Vec<i64>) -> Vec<Result<(), StoreError>> {
            if let Some((entered, leave)) = &self.gate
                && self.first.fetch_add(1, Ordering::SeqCst) == 0
            {
                entered.wait();
                leave.wait();
            }
            let answers =
                jobs.iter()
                    .map(|job| {
                        if *job < 0 { Err(StoreError::Unavailable(format!("refused {job}"))) } else { Ok(()) }
                    })
                    .collect();
            self.batches.lock_unpoisoned().push((jobs, std::thread::current().id()));
            answers
        }
    }

    #[test]
    fn a_writer_alone_commits_its_step_at_once_on_its_own_thread() {
        let group = GroupCommit::default();
        let recorder = Recorder::default();
        wait(group.commit(&recorder, 7)).unwrap();
        wait(group.commit(&recorder, 8)).unwrap();
        let batches = recorder.batches.lock_unpoisoned();
        let here = std::thread::current().id();
        assert_eq!(*batches, vec![(vec![7], here), (vec![8], here)]);
    }

    /// While one batch is written, the steps of eight other writers queue; the next batch
    /// holds all of them and is written by the same writer, each writer hears its own answer,
    /// and a refused step refuses only its writer.
    #[test]
    fn steps_queued_while_a_batch_is_written_share_the_next_and_each_hears_its_own_answer() {
        let entered = Arc::new(Barrier::new(2));
        let leave = Arc::new(Barrier::new(2));
        let group = Arc::new(GroupCommit::default());
        let recorder =
            Arc::new(Recorder { gate: Some((entered.clone(), leave.clone())), ..Default::default() });
        let first = {
            let (group, recorder) = (group.clone(), recorder.clone());
            std::thread::spawn(move || wait(group.commit(&*recorder, 0)))
        };
        entered.wait();
        // The first batch is being written: these queue behind it.
        let queued: Vec<_> = (1..=8i64)
            .map(|n| {
                let job = if n == 5 { -5 } else { n };
                let (group, recorder) = (group.clone(), recorder.clone());
                std::thread::spawn(move || (job, wait(group.commit(&*recorder, job))))
            })
            .collect();
        while group.queue.lock_unpoisoned().waiting.len() < 8 {
            std::thread::yield_now();
        }
        leave.wait();
        first.join().unwrap().unwrap();
        for writer in queued {
            let (job, answer) = writer.join().unwrap();
            match answer {
                Ok(()) => assert!(job >= 0, "{job} was refused but answered Ok"),
                Err(error) => {
                    assert_eq!(error.to_string(), format!("session store unavailable: refused {job}"))
                }
            }
        }
        let batches = recorder.batches.lock_unpoisoned();
        let sizes: Vec<usize> = batches.iter().map(|(jobs, _)| jobs.len()).collect();
        assert_eq!(sizes, vec![1, 8], "{batches:?}");
        assert_eq!(
            batches[0].1, batches[1].1,
            "the writer that led wrote the queued steps next, without a hand-over"
        );
    }

    /// A future dropped before it is polled takes its step out of the queue: nobody was told
    /// it was written, and it is not.
    #[test]
    fn a_step_whose_writer_stopped_waiting_before_its_batch_is_not_written() {
        let group = GroupCommit::default();
        let recorder = Recorder::default();
        drop(group.commit(&recorder, 1));
        wait(group.commit(&recorder, 2)).unwrap();
        assert_eq!(recorder.batches.lock_unpoisoned()[0].0, vec![2]);
    }

    /// A committer that panics answers its batch with an error and lets the next writer
    /// commit: the queue is never left held.
    #[test]
    fn a_batch_that_panics_leaves_the_queue_free_for_the_next() {
        struct Panics(AtomicUsize);
        impl Committer for Panics {
            type Job = ();
            fn commit_batch(&self, jobs: Vec<()>) -> Vec<Result<(), StoreError>> {
                if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("the first batch fails");
                }
                jobs.iter().map(|_| Ok(())).collect()
            }
        }
        let group = GroupCommit::default();
        let committer = Panics(AtomicUsize::new(0));
        let panicked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait(group.commit(&committer, ()))));
        assert!(panicked.is_err());
        wait(group.commit(&committer, ())).unwrap();
    }
}
