//! The simulations behind the defaults: `cargo run --release --example herd` runs them, with this
//! crate's own `Backoff`, budgets, throttle, breaker and hedging loop. What decides the retries
//! differs by model: in the optimistic-concurrency model each client retries through the crate's
//! `RetryState` (the loop `#[retry]` runs); the tail model's calls are the crate's hedging loop;
//! the outage, open and chain models count attempts in a loop of their own, around the crate's
//! `Backoff` and budgets.
//!
//! `herd` prints its tables in a few seconds — the outage, the optimistic-concurrency
//! sweep, the tail-latency model with and without hedging, and the open and chain models of
//! "Retries under real traffic" — and writes SVG charts to `target/herd/` (`--help` for its options:
//! `--model outage|occ|tail|open|chain|token-bucket|collapse|capacity-cut|all`, `--clients`, `--capacity`, `--runs`, `--seed`,
//! `--attempts`, `--outage-secs`, `--rate`, `--timeout`, `--ratio`, `--depth`, `--out`, `--csv`;
//! `--model open` alone adds its map of recovery by load and outage, a few seconds more). `cargo test --workspace --all-features` runs the simulator's own tests
//! (invariants, determinism, the charts, and the optimistic-concurrency model against AWS's own
//! simulator).
//!
//! # The outage: why jitter
//!
//! What `cargo run --release --example herd` shows with its defaults: 10,000 clients call near
//! t = 0, the service is down for 5 s and then serves 2,000 calls/s (calls over a 10 ms slot's share
//! fail as overload); each client makes at most 10 calls (base 200 ms, cap 30 s). Every wait is
//! drawn by this crate's `Backoff`, the code `#[retry]` runs. The last row adds a
//! `RetryBudget`: one token bucket that all the clients' retries draw from (see [`protecting`](crate::guide::protecting)).
//!
//! | strategy | calls | peak calls per 100 ms after recovery | 99% of clients done | gave up |
//! |---|---:|---:|---:|---:|
//! | none (retry at once) | 100,000 | 0 | never | 10,000 |
//! | fixed (1 s) | 98,000 | 10,000 | never | 9,000 |
//! | exponential, no jitter | 98,000 | 10,000 | never | 9,000 |
//! | **full jitter** | 73,249 | **278** | 23.6 s | **0** |
//! | equal jitter | 69,575 | 585 | 21.9 s | 0 |
//! | decorrelated jitter | 70,567 | 537 | never | 620 |
//! | full jitter + one shared `RetryBudget` | 10,100 | 0 | never | 10,000 |
//!
//! Without jitter every retry of every client lands in the same 100 ms: the service, able to serve
//! 200 calls in that window, receives 10,000, and nine clients in ten run out of attempts. With full
//! jitter the peak is 36 times lower and every client gets through. (Decorrelated jitter's waits
//! grow from the previous one and bunch at the cap; 6% of clients ran out of attempts here.)
//!
//! The last row is the other half of the story. Per-call limits still let every client multiply
//! the load on a service that is down; a retry budget shared by all calls (the AWS SDKs' retry
//! quota: 500 tokens, 5 per retry, 1 back per first-try success) stops retrying when nothing
//! succeeds. Here it runs dry after 100 retries, and every client fails fast instead of waiting
//! out the outage — the right trade when the outage is long: with a 60 s outage, full jitter alone
//! makes 100,000 calls (and 94% of clients give up anyway), full jitter with the shared budget
//! 10,100: **89,900 calls, 90%, never reach the struggling service** (`--outage-secs 60`).
//!
//! ![Calls per 100 ms after a 5 s outage, one line per strategy](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-outage.svg)
//!
//! The second model reproduces the AWS Architecture Blog's "Exponential Backoff And Jitter" (2015):
//! clients contend for one row under optimistic concurrency. At 100 clients (100 runs averaged):
//! exponential backoff without jitter makes 1,853 write calls and finishes in 63 s; full jitter
//! makes 796 and finishes in 4.9 s. AWS's own simulator (`aws-samples/aws-arch-backoff-simulator`),
//! with the same parameters and averaged over 30 seeds, gives 1,856 calls in 63.4 s and 796 in
//! 4.9 s; one seed's 100-run average varies by about 6 calls and 0.4 s (exponential), and 1 call
//! and 0.05 s (full jitter), in either simulator. The test `occ::tests::at_100_clients_the_model_gives_aws_simulators_figures_within_the_seed_noise`
//! holds the model to AWS's figures within four times that noise.
//!
//! ![Write calls vs clients in the OCC model](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-occ-calls.svg)
//!
//! # The tail: hedging
//!
//! What it buys, in the herd's tail model (`cargo run --release --example herd -- --model tail`):
//! 100,000 calls at 1,000 a second to a service whose attempts answer in lognormal time (median
//! 10 ms, σ 0.4), except 0.5% that stall for 0.5–1.5 s; each call is the crate's own hedging loop
//! (`Retry::hedge(…).call_async_with`) on a simulated clock, at most 3 calls per call:
//!
//! | hedging | p50 | p99 | p99.9 | extra calls |
//! |---|---:|---:|---:|---:|
//! | none | 10.0 ms | 28.1 ms | 1,310.8 ms | 0 |
//! | `hedge = "20ms"` (the unhedged p95) | 10.1 ms | 26.6 ms | **34.7 ms** | 4.70% |
//! | `hedge = "29ms"` (the unhedged p99) | 10.0 ms | 28.1 ms | 43.5 ms | 0.89% |
//! | `hedge = "p95"` (adaptive) | 10.0 ms | 27.3 ms | 35.8 ms | 3.77% |
//!
//! Hedging at the 95th percentile cuts the 99.9th **38-fold for 4.7% more calls** — the shape of
//! "The Tail at Scale" (Dean & Barroso, 2013: 1,800 ms to 74 ms for 2% more requests). At the 99th
//! percentile it costs a fifth of the calls and leaves a p99.9 a quarter higher. The adaptive p95
//! settled at 21.0 ms, its bucket's upper edge above the true 19.7 ms, so it hedges a little later
//! and less. The model's service does not slow down under the hedges' extra load; one that queues
//! would give some of the gain back.
//!
//! ![Share of calls slower than each latency, log-log, with and without hedging](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-tail.svg)
//!
//! # Retries under real traffic
//!
//! The outage above is a *closed* system: a fixed set of clients, each waiting for its call before
//! making the next, so a client that backs off also stops adding load. Services mostly see an
//! *open* one: calls keep arriving at their own rate, whatever happens to the calls before them.
//! There, backoff spreads the retries out in time but does not reduce them: with 4 attempts, every
//! call that fails makes 4 calls, now or a little later, and a service that is down receives 4
//! times its usual traffic, jittered or not. If, when it comes back, it first has to serve a
//! backlog of attempts whose clients timed out long ago, new calls wait behind it, time out in
//! turn, and are retried: the retries keep the overload going after its cause has gone. That is a
//! **metastable failure** — the service is up and healthy, and never recovers until the load is
//! shed.
//!
//! `cargo run --release --example herd -- --model open` simulates it: calls arrive as a Poisson
//! process (1,000/s) at a service of 2,000 attempts/s served first come first served; each attempt
//! times out after 1 s and is served anyway (wasted work); from 10 s the service serves nothing
//! for 5 s, queueing what comes. The model counts each call's attempts itself; every wait, every
//! budget's grant and every guard's verdict is the crate's own `Backoff`, `RetryBudget`,
//! `RatioBudget`, `AdaptiveThrottle` and `CircuitBreaker`.
//!
//! | strategy | calls per call while down | recovered after the outage |
//! |---|---:|---:|
//! | `no-retry` | 1.00 | 3 s |
//! | `full-jitter` (4 attempts) | 4.00 | **never** |
//! | `full-jitter+budget` (`RetryBudget`, the AWS bucket) | 1.03 | 3 s |
//! | `full-jitter+ratio` (`RatioBudget::new(0.2, 10, 10 s)`) | 1.52 | 6 s |
//! | `full-jitter+throttle` (`AdaptiveThrottle::new(2.0, 60 s)`) | 4.00 | never (within the run) |
//! | `full-jitter+breaker` (`CircuitBreaker::new(0.5, 20, 10 s, 5 s)`) | 4.00 | 15 s |
//! | `defaults` (`Policy::default()`, 5 attempts, and a `DefaultBudget` per client, 10 clients) | 1.76 | 6 s |
//!
//! "Calls per call while down" counts the calls that arrived and ended within the outage. Such a
//! call failed, so unless a budget or a guard stopped it, it made all its attempts: the 4.00 rows
//! follow from the counting, whatever the jitter, and are not a measured effect. (The 1.52 is above
//! 1.2 because the 5 s outage is shorter than the 10 s window: the calls that succeeded before it
//! still pay for retries during it.)
//!
//! The `defaults` row is what a client gets without asking: the default policy's 5 attempts and a
//! `DefaultBudget` (20% of the calls over 10 s plus a floor of 10 retries a second) for each
//! client, as each process calling through one `#[retry]` function has one. The model's calls have
//! no clients of their own, so they are split at random among 10 (100 calls/s each; `--clients`
//! changes it). The floor is per budget, so the fleet's size matters: a service down longer than
//! the window receives at most 1 + 0.2 + 10 × 10 / 1,000 = 1.3 calls per call. With a 60 s outage
//! (`--model open --outage-secs 60 --attempts 5`) the defaults send 1.31 and recover 109 s after it;
//! 5 attempts without a budget send 5.00 and never recover. One client would send 1.21, a hundred
//! (10 calls/s each, their floors now as many retries as calls) 2.23, and never recover.
//!
//! Each run also checks the model's accounting against figures known before it runs. With the
//! service down for the whole run, 1,000 calls/s and 4 attempts, every call counted makes exactly
//! 4.00 calls with every jitter kind. With a 30% ratio budget it makes 1.32: the budget's own
//! formula, 1 + 0.3 + 10/1,000 = 1.31 from its ratio and its floor of 10 retries a second, to
//! within the edges of its window.
//! A figure off either would mean the simulation miscounts attempts or drives the budget wrong.
//! Neither says how retries behave in a real outage.
//!
//! The sweep over load (rate / capacity) and outage length, seconds to recover or `never` within
//! the run (which lasts long enough for `no-retry` to drain its backlog one and a half times over):
//!
//! ```text
//!                     outage: 1 s     2 s     5 s    10 s    20 s    30 s
//! no-retry     load 0.3       0 s     0 s     1 s     3 s     8 s    12 s
//!              load 0.5       0 s     0 s     3 s     9 s    18 s    28 s
//!              load 0.7       0 s     2 s     9 s    21 s    45 s    66 s
//!              load 0.9       0 s     9 s    41 s    84 s   167 s   254 s
//! full-jitter  load 0.3       0 s     0 s   never   never   never   never
//!              load 0.5       0 s   never   never   never   never   never
//!              load 0.7       0 s   never   never   never   never   never
//!              load 0.9       0 s   never   never   never   never   never
//! +budget      load 0.3       0 s     0 s     1 s     3 s     8 s    12 s
//!              load 0.5       0 s     1 s     3 s     8 s    18 s    28 s
//!              load 0.7       0 s     2 s     9 s    21 s    44 s    68 s
//!              load 0.9       0 s     9 s    40 s    78 s   173 s   260 s
//! +ratio       load 0.3       0 s     0 s     2 s     5 s    10 s    16 s
//!              load 0.5       0 s     3 s     6 s    15 s    29 s    46 s
//!              load 0.7       0 s     6 s    24 s    50 s   never   never
//!              load 0.9       0 s   never   never   never   never   never
//! defaults     load 0.3       0 s     0 s     2 s     6 s    11 s    18 s
//!              load 0.5       0 s     3 s     6 s    18 s    36 s    55 s
//!              load 0.7       0 s     9 s    45 s   never   never   never
//!              load 0.9       0 s   never   never   never   never   never
//! ```
//!
//! (loads 0.4, 0.6 and 0.8 are in the program's output). Retries without a budget turn any outage
//! longer than a couple of seconds into a service that never comes back, even at 30% load. A ratio
//! budget bounds the extra load by its ratio: 20% is safe as long as 1.2 × the load stays well
//! below the capacity, and not at 80% load; the defaults, 20% and ten clients' floors, recover a
//! little later than it, and from less at 70% load. The AWS bucket, which stops retrying when
//! successes stop, behaves like not retrying at all during the outage, and recovers as fast.
//!
//! The two guards of [`protecting`](crate::guide::protecting) (the
//! map for them is in `--model open`'s output): the **breaker** recovers from every outage and load
//! of the sweep, in 9–32 s — it waits out its 5 s break and probes, and while open it sheds first
//! attempts and retries alike, so the backlog drains — but while the service is down its calls
//! that got through still make all their attempts (4.00). The **throttle** counts answers, as
//! gRPC's does: an attempt still queued at the service counts for nothing until it times out a
//! second later. With K = 2 and the 10 s of healthy traffic before the outage in its 60 s window
//! (10,000 accepts), it lets up to 20,000 unanswered attempts through before it rejects one: all
//! of this 5 s outage's (4.00 calls per call), and the backlog they leave keeps the attempts timing
//! out, so at this run's length it counts as not recovered. It is a guard against overload by
//! first attempts that lasts (a capacity drop), not against retry storms, and pairs with a budget.
//! Neither refused a call while the service was healthy (the "refused while healthy" column of the
//! output: 0 for both), and the throttle never refuses a service that answers every call, however
//! many calls are in flight (it used to count an attempt in flight as unanswered, and
//! refused 558 of 640 calls to a healthy service in waves of 64).
//!
//! ![Goodput and offered load per second around a 5 s outage, one line per strategy](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-open.svg)
//!
//! Which budget to pick, from these runs: the AWS bucket (`RetryBudget`) for a client, which
//! should stop retrying when nothing succeeds; a `RatioBudget` for a service's outbound calls,
//! which bounds the extra load by its ratio ([`protecting`](crate::guide::protecting)).
//!
//! # A chain of services
//!
//! Retries multiply across layers: a call through 5 services that each make 3 attempts reaches
//! the last one up to 3⁵ = **243** times. `cargo run --release --example herd -- --model chain --outage-secs 60 --ratio 0.3 --depth 4`
//! shows it: the open model's service at the bottom of a chain, calls arriving at the top at
//! 1,000/s, and `--depth` tiers that retry (the clients included), each calling the one below with
//! full jitter and 4 attempts; only the last tier times out its attempts (the timeouts of a chain
//! nest), and the bottom is down for 60 s. Calls the bottom received per call at the top, over the
//! calls that arrived while it was down (each counted to its end, however long after):
//!
//! | strategy | depth 1 | depth 2 | depth 3 | depth 4 |
//! |---|---:|---:|---:|---:|
//! | `every-tier`: every tier retries whatever fails | 4.000 | 16.000 | **64.000** | 256.000 |
//! | `every-tier+ratio`: and a `RatioBudget::new(0.3, 10, 10 s)` at every tier | 1.316 | 1.723 | 2.249 | 2.934 |
//! | `one-tier`: a tier that gave up answers "don't retry" | 4.000 | 4.000 | 4.000 | 4.000 |
//! | `one-tier+ratio`: and the ratio budgets | 1.315 | 1.316 | 1.315 | 1.314 |
//!
//! Retrying at every tier multiplies the load on the failing service by the attempts at each tier:
//! 4^depth. A ratio budget at every tier bounds each tier's share but they still compound, about
//! 1.3^depth. When a tier that gave up answers "don't retry" (an `x-should-retry: false` or a
//! `grpc-retry-pushback-ms: -1`, on which this crate's clients stop) and the tiers above do not
//! retry it, only the tier next to the failure retries, and the bottom sees one tier's attempts
//! whatever the depth: 4, or with its ratio budget about 1.31, the budget's own formula (as in the
//! open model's accounting check). Of these chains only the ratio budgets recover within the run
//! (about 110 s after this outage; at depth 1 for `every-tier+ratio`, at every depth for
//! `one-tier+ratio`). `herd` alone prints this table for its defaults (a 5 s outage, a ratio of 0.2, depths 1 to 3): 4, 16 and 64 for `every-tier`,
//! 4 at every depth for `one-tier`, 1.4 to 2.5 for the ratio budgets.
//!
//! ![Calls at the bottom per call at the top by the tiers that retry, one line per strategy, log scale](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-chain.svg)
//!
//! # The field's retry storms, reproduced
//!
//! Three published experiments, run by `herd` with their authors' strategies beside the crate's
//! guards (`--model token-bucket|collapse|capacity-cut`; `--csv` prints each one's table).
//!
//! **Token buckets against breakers** (Brooker, "Fixing retries with token buckets and circuit
//! breakers", 2022, after his `retry_sim` code): 100 clients of 10 calls/s, each attempt failing
//! with probability p, retries at once. Attempts per call, 40 runs each, more on the noisier rows
//! (until each figure's standard error is at most 0.001, so that two seeds agree to 0.005):
//!
//! | p | no-retries | three-retries | adaptive-10pct | breaker-10pct | `RetryBudget` | `RatioBudget` 10 % | `AdaptiveThrottle` | `CircuitBreaker` |
//! |---|---:|---:|---:|---:|---:|---:|---:|---:|
//! | 0.1 | 1.000 | 1.110 | 1.102 | 1.031 | 1.111 | 1.111 | 1.097 | 1.111 |
//! | 0.2 | 1.000 | 1.248 | 1.134 | 1.004 | 1.246 | 1.187 | 1.200 | 1.247 |
//! | 0.3 | 1.000 | 1.417 | 1.139 | 1.000 | 1.385 | 1.192 | 1.288 | 1.409 |
//! | 0.5 | 1.000 | 1.874 | 1.141 | 1.000 | 1.260 | 1.194 | 1.072 | 1.410 |
//!
//! His curves hold: three retries nearly double the load at p = 0.5, his bucket caps it near 1.14
//! and his breaker stops retrying altogether above 10 % failures (and so fails 1 call in 2). Of
//! ours, the ratio budget holds near 1.19 at every p, the token budget (`RetryBudget`, sized as his
//! bucket) gives back what a successful retry took and so retries more while enough succeed, the
//! throttle backs off as the service stops accepting, and the breaker, which counts calls after
//! their retries, rarely opens at these failure rates. `three-retries` and `no-retries` are
//! checked in tests against 1 + p + p² + p³ and 1 (and their successes against 1 − p⁴ and 1 − p).
//!
//! ![Successful calls and attempts per 100 calls against p, his four strategies](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-token-bucket.svg)
//! ![The same for three-retries and the crate's four guards](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-token-bucket-guards.svg)
//!
//! **Collapse** (Brooker's `simple_collapse_sim`): a server whose service time grows with its
//! concurrency (1 s + 10 ms per request in service), clients timing out at 3 s with 3 tries, 40
//! calls/s and a 5 s spike to 80/s at t = 20 s. Of 100 runs, how many never serve a call again:
//!
//! | immediate | backoff-20s (his) | full jitter | full jitter + `RatioBudget` | full jitter + `AdaptiveThrottle` | `defaults` |
//! |---:|---:|---:|---:|---:|---:|
//! | 82 % | 0 % | 74 % | **0 %** | 0 % (at about half its throughput: its 60 s window keeps the collapse's failures) | **0 %** |
//!
//! His own simulator collapses 16 runs in 20 with immediate retries. Full jitter alone, with the
//! crate's default 200 ms base, spreads the retries over too short a time to drain a queue that
//! takes seconds per request: it collapses nearly as often as retrying at once. The ratio budget
//! caps the retries at 10 % of the calls, and the spike passes. So do the crate's defaults (5 tries
//! and one `DefaultBudget`, the 40 calls/s taken as one client's): its 20 % and floor of 10 retries
//! a second let through about 50 retries a second at the worst (the mean of 10 runs, 2 s after the
//! spike ends), and no run of 100 collapses. The floor is per budget: split among ten clients
//! (`--clients 10`), the same calls' floors allow 100 retries a second, more than the calls, and
//! 74 % of the runs collapse, as with full jitter alone.
//!
//! ![Successes, retries and timeouts per second, one line per strategy](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-collapse.svg)
//!
//! **A capacity cut** (Huang et al., "Metastable failures in the wild", OSDI '22): one server of
//! 1,000 requests/s cut to 20 % for `trigger_s`, clients that time out at 3 s (the server still
//! serves what they abandoned), 5 attempts. The shortest cut from which no run of 10 recovers
//! within 300 s (`--model capacity-cut`, the whole grid, 10 seeds a cell):
//!
//! | strategy | load 0.9 | load 0.675 |
//! |---|---:|---:|
//! | none | never | never |
//! | immediate-4 (the paper's client) | 4 s | 5 s |
//! | full jitter | 4 s | 5 s |
//! | full jitter + `RatioBudget` (10 % + 10/s) | 4.5 s | **never, up to 20 s** |
//! | full jitter + `AdaptiveThrottle` | 4 s | 5.25 s |
//! | `defaults` (5 attempts, a `DefaultBudget` per client, 10 clients) | 4 s | **never, up to 20 s** |
//!
//! The paper's shape holds: past a sharp boundary, retrying never recovers, and 25 % less load
//! moves the boundary later. This model's boundary is about 4 s, not the paper's 9 to 10 s (their
//! service and hardware are not this queue). Backoff alone does not save an open system: it spreads
//! the five attempts but sends them all. The ratio budget does, where its ceiling (1.1 attempts per
//! call plus 10/s) leaves the server room to drain: at 0.675 it recovers from every cut. So do the
//! crate's defaults, with no budget asked for: 10 clients (the calls split at random among them),
//! each with its `DefaultBudget`, hold the retries to 20 % of the calls plus 100 a second in all
//! (1.31 calls per call at 0.9 once stuck, where full jitter sends 5), which at 0.675 leaves the
//! server room to drain from every cut; at 0.9, 1.31 × 900 is above its 1,000/s and the boundary
//! stays at 4 s.
//!
//! ![Runs that recover, in %, against the length of the cut, one panel per load, one line per strategy](https://raw.githubusercontent.com/retry-jitter/retry-jitter/main/docs/herd-capacity-cut.svg)
