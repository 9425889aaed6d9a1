//! A single-threaded executor on virtual time, for running the crate's own async code — the
//! hedging loop of `Retry::call_async_with` — under simulation.
//!
//! Tasks are boxed futures polled in the order they were woken. Time stands still while any task
//! can run; when none can, the clock jumps to the earliest timer and wakes its task. [`sleep`]
//! registers a timer in that queue (the event queue of `sim`, keyed by virtual nanoseconds, ties
//! in registration order), and [`now`] is a [`retry_jitter::time::Clock`]: a plain `fn` that
//! reads the virtual time from a thread-local, as a fixed `Instant` plus the nanoseconds
//! simulated so far. So a run is deterministic, takes no real time to sleep, and whatever the
//! loop measures (a hedge's latency histogram, `max_elapsed`) is measured in virtual time.
//!
//! One executor runs at a time on a thread (each `run` installs its state in the thread-local
//! and removes it when done); `sleep` and `now` outside of one panic.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crate::sim::Queue;
use crate::strategy::nanos;

/// A task: a future run for its effects.
type Task = Pin<Box<dyn Future<Output = ()>>>;

/// What `sleep`, `now`, `spawn` and the wakers share with the running executor.
struct State {
    /// Virtual nanoseconds since the run began.
    now: u64,
    /// The instant `now` counts from.
    origin: Instant,
    /// Timers by deadline: the index of their waker in `wakers`.
    timers: Queue<usize>,
    /// The waker of each timer still wanted (`None` once fired or dropped).
    wakers: Vec<Option<Waker>>,
    /// Tasks woken, to be polled in this order; `queued` says which are in it already.
    ready: VecDeque<usize>,
    queued: Vec<bool>,
    /// Tasks spawned by tasks, to be added after the current poll.
    spawned: Vec<Task>,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// Run `f` on this thread's executor state.
fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(s.borrow_mut().as_mut().expect("inside exec::run")))
}

/// The virtual time, as an `Instant` (a `retry_jitter::time::Clock`).
pub fn now() -> Instant {
    with(|s| s.origin + Duration::from_nanos(s.now))
}

/// The virtual time in nanoseconds since the run began.
pub fn nanos_now() -> u64 {
    with(|s| s.now)
}

/// Start `task` beside the running ones.
pub fn spawn(task: impl Future<Output = ()> + 'static) {
    with(|s| s.spawned.push(Box::pin(task)));
}

/// A future that is ready once `d` of virtual time has passed (the `sleep` the loop is given).
pub fn sleep(d: Duration) -> Sleep {
    let deadline = nanos_now().saturating_add(nanos(d));
    Sleep {
        deadline,
        timer: None,
    }
}

/// The future of [`sleep`].
pub struct Sleep {
    deadline: u64,
    /// Its timer, once registered.
    timer: Option<usize>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let timer = self.timer;
        let registered = with(|s| {
            if s.now >= deadline {
                return None;
            }
            Some(match timer {
                Some(id) => {
                    s.wakers[id] = Some(cx.waker().clone());
                    id
                }
                None => {
                    let id = s.wakers.len();
                    s.wakers.push(Some(cx.waker().clone()));
                    s.timers.push(deadline, id);
                    id
                }
            })
        });
        match registered {
            None => Poll::Ready(()),
            Some(id) => {
                self.timer = Some(id);
                Poll::Pending
            }
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        // A cancelled timer (a hedge delay when an attempt answered first, the attempt a hedge
        // beat) wakes nobody when its time comes.
        if let Some(id) = self.timer {
            STATE.with(|s| {
                if let Ok(mut s) = s.try_borrow_mut() {
                    if let Some(s) = s.as_mut() {
                        s.wakers[id] = None;
                    }
                }
            });
        }
    }
}

/// Wakes task `id` by queueing it on this thread's executor.
struct TaskWaker(usize);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        with(|s| {
            if !s.queued[self.0] {
                s.queued[self.0] = true;
                s.ready.push_back(self.0);
            }
        });
    }
}

/// The executor's tasks: a slot each (reused once a task has finished), with its waker.
#[derive(Default)]
struct Tasks {
    slots: Vec<Option<(Task, Waker)>>,
    free: Vec<usize>,
    live: usize,
    total: u64,
}

impl Tasks {
    /// Add a task, ready to be polled.
    fn add(&mut self, task: Task) {
        let id = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            with(|s| s.queued.push(false));
            self.slots.len() - 1
        });
        self.slots[id] = Some((task, Waker::from(Arc::new(TaskWaker(id)))));
        with(|s| {
            s.queued[id] = true;
            s.ready.push_back(id);
        });
        self.live += 1;
        self.total += 1;
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Virtual nanoseconds from the start to the last task's end.
    pub elapsed: u64,
    /// Tasks run, `main` included.
    pub tasks: u64,
    /// Timers registered.
    pub timers: u64,
}

/// Run `main`, and every task spawned, until all have finished.
pub fn run(main: impl Future<Output = ()> + 'static) -> Run {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        assert!(s.is_none(), "one exec::run at a time on a thread");
        *s = Some(State {
            now: 0,
            origin: Instant::now(),
            timers: Queue::new(),
            wakers: Vec::new(),
            ready: VecDeque::new(),
            queued: Vec::new(),
            spawned: Vec::new(),
        });
    });
    // Removes the state however the run ends (a task may panic).
    struct Uninstall;
    impl Drop for Uninstall {
        fn drop(&mut self) {
            STATE.with(|s| s.borrow_mut().take());
        }
    }
    let _uninstall = Uninstall;

    let mut tasks = Tasks::default();
    tasks.add(Box::pin(main));
    let mut finished: Vec<usize> = Vec::new();
    while tasks.live > 0 {
        // Poll every task that can run; time stands still meanwhile.
        while let Some(id) = with(|s| {
            let id = s.ready.pop_front()?;
            s.queued[id] = false;
            Some(id)
        }) {
            let Some((task, waker)) = tasks.slots[id].as_mut() else {
                continue; // a stale wake of a finished task
            };
            if task
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_ready()
            {
                tasks.slots[id] = None;
                finished.push(id);
                tasks.live -= 1;
            }
            for task in with(|s| std::mem::take(&mut s.spawned)) {
                tasks.add(task);
            }
        }
        // Slots are reused only once no wake for them can be pending.
        tasks.free.append(&mut finished);
        if tasks.live == 0 {
            break;
        }
        // None can run: the clock jumps to the next timer still wanted.
        let woke = with(|s| loop {
            let (at, id) = s.timers.pop()?;
            if let Some(waker) = s.wakers[id].take() {
                s.now = s.now.max(at);
                break Some(waker);
            }
        });
        match woke {
            Some(waker) => waker.wake(),
            None => panic!(
                "{} tasks wait on nothing: they would never finish",
                tasks.live
            ),
        }
    }
    with(|s| Run {
        elapsed: s.now,
        tasks: tasks.total,
        timers: s.wakers.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn sleeps_end_in_virtual_time_order_and_take_no_real_time() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let started = Instant::now();
        let l = log.clone();
        let run = run(async move {
            for (name, d) in [("c", 300), ("a", 100), ("b", 200), ("a2", 100)] {
                let l = l.clone();
                spawn(async move {
                    let t0 = now();
                    sleep(ms(d)).await;
                    assert_eq!(now() - t0, ms(d));
                    l.borrow_mut().push((name, nanos_now()));
                });
            }
            sleep(ms(1_000_000)).await; // a virtual 17 minutes
        });
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            *log.borrow(),
            [
                ("a", 100_000_000),
                ("a2", 100_000_000),
                ("b", 200_000_000),
                ("c", 300_000_000)
            ]
        );
        assert_eq!(run.elapsed, 1_000_000_000_000);
        assert_eq!(run.tasks, 5);
    }

    #[test]
    fn a_dropped_sleep_wakes_nobody_and_the_clock_stops_at_the_last_wanted_timer() {
        let run = run(async {
            // A race the short timer wins: the long one is dropped before its time.
            let mut long = std::pin::pin!(sleep(ms(500)));
            let mut short = std::pin::pin!(sleep(ms(10)));
            std::future::poll_fn(|cx| {
                let _ = long.as_mut().poll(cx);
                short.as_mut().poll(cx)
            })
            .await;
        });
        assert_eq!(run.elapsed, 10_000_000);
    }

    #[test]
    fn a_zero_sleep_is_ready_at_once() {
        let run = run(async {
            sleep(Duration::ZERO).await;
            sleep(ms(1)).await;
            sleep(Duration::ZERO).await;
        });
        assert_eq!((run.elapsed, run.timers), (1_000_000, 1));
    }

    #[test]
    #[should_panic(expected = "wait on nothing")]
    fn a_task_that_waits_on_nothing_is_reported() {
        run(std::future::pending());
    }
}
