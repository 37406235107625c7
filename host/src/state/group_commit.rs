//! Many writers, one transaction (group commit). A store whose commit costs the same whether
//! it writes one step or ten — SQLite's transaction and the pages it appends to the WAL —
//! lets the steps that arrive while one commit runs share the next.
//!
//! There is no committing thread and no timer. A writer that finds nobody committing commits
//! at once, on its own thread, whatever is queued (its own step, when alone: no added wait),
//! and goes on with the steps queued meanwhile, a few batches at most. A writer that finds a
//! commit running queues its step and waits on its thread — as it waited for the one
//! connection's lock before — until its step is answered or the committer lets go, when it
//! commits what is queued itself. It never yields to its runtime: a turn's step woken back
//! through the runtime's queue waited there behind every other session's work, which cost
//! more than the transactions it saved (BENCHMARKS.md, "Issue 52: the store"). Each step is
//! durable when its writer's call returns, before its turn's next model call.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

use super::store::StoreError;
use crate::unpoisoned::LockUnpoisoned as _;

/// What writes a batch.
pub(super) trait Committer: Sync {
    type Job: Send;
    /// Writes `jobs` in one transaction, each of them all or nothing; answers each, in order.
    fn commit_batch(&self, jobs: Vec<Self::Job>) -> Vec<Result<(), StoreError>>;
}

/// Batches one writer commits in a row at most, so that its own turn goes on.
const ROUNDS: usize = 4;

/// The queue of one store's writers.
pub(super) struct GroupCommit<J> {
    queue: Mutex<Queue<J>>,
    /// Signalled when answers are handed out and when the committer lets go.
    changed: Condvar,
}

struct Queue<J> {
    /// Steps waiting for the next batch, by ticket.
    waiting: Vec<(u64, J)>,
    /// Answers not yet taken by their writers.
    answers: HashMap<u64, Result<(), StoreError>>,
    committing: bool,
    next_ticket: u64,
}

impl<J> Default for GroupCommit<J> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(Queue {
                waiting: Vec::new(),
                answers: HashMap::new(),
                committing: false,
                next_ticket: 0,
            }),
            changed: Condvar::new(),
        }
    }
}

impl<J: Send> GroupCommit<J> {
    /// Commits `job` with whatever else is queued, by `committer`, and answers once it is
    /// written (or refused).
    pub(super) fn commit<C: Committer<Job = J>>(&self, committer: &C, job: J) -> Result<(), StoreError> {
        let mut queue = self.queue.lock_unpoisoned();
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        queue.waiting.push((ticket, job));
        while queue.committing {
            queue = self.changed.wait(queue).unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(answer) = queue.answers.remove(&ticket) {
                return answer;
            }
        }
        queue.committing = true;
        drop(queue);
        let leading = Leading(self);
        for _ in 0..ROUNDS {
            let (tickets, jobs): (Vec<u64>, Vec<J>) =
                std::mem::take(&mut self.queue.lock_unpoisoned().waiting).into_iter().unzip();
            if jobs.is_empty() {
                break;
            }
            let mut running = Running { group: self, tickets, answers: None };
            running.answers = Some(committer.commit_batch(jobs));
        }
        drop(leading);
        let answer = self.queue.lock_unpoisoned().answers.remove(&ticket);
        answer.unwrap_or_else(|| Err(StoreError::Unavailable("a batch left a step unanswered".into())))
    }
}

/// The batch being committed: whatever ends it — its answers, or a panic in the committer —
/// hands the answers out and tells the writers waiting.
struct Running<'a, J> {
    group: &'a GroupCommit<J>,
    tickets: Vec<u64>,
    answers: Option<Vec<Result<(), StoreError>>>,
}

impl<J> Drop for Running<'_, J> {
    fn drop(&mut self) {
        let mut answers = self.answers.take().unwrap_or_default().into_iter();
        let mut queue = self.group.queue.lock_unpoisoned();
        for ticket in self.tickets.drain(..) {
            let answer = answers
                .next()
                .unwrap_or_else(|| Err(StoreError::Unavailable("the batch this step was in failed".into())));
            queue.answers.insert(ticket, answer);
        }
        drop(queue);
        self.group.changed.notify_all();
    }
}

/// A writer committing for the others: however it stops — done, or a panic in the committer
/// — it lets go of the queue and tells the writers waiting, one of whom commits next.
struct Leading<'a, J>(&'a GroupCommit<J>);

impl<J> Drop for Leading<'_, J> {
    fn drop(&mut self) {
        self.0.queue.lock_unpoisoned().committing = false;
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    use super::*;

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
        group.commit(&recorder, 7).unwrap();
        group.commit(&recorder, 8).unwrap();
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
            std::thread::spawn(move || group.commit(&*recorder, 0))
        };
        entered.wait();
        // The first batch is being written: these queue behind it.
        let queued: Vec<_> = (1..=8i64)
            .map(|n| {
                let job = if n == 5 { -5 } else { n };
                let (group, recorder) = (group.clone(), recorder.clone());
                std::thread::spawn(move || (job, group.commit(&*recorder, job)))
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
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| group.commit(&committer, ())));
        assert!(panicked.is_err());
        group.commit(&committer, ()).unwrap();
    }
}
