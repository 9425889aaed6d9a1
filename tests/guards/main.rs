//! The guards a call shares with others, one test binary: retry budgets (`RetryBudget`,
//! `RatioBudget`, the default one each function has), the adaptive throttle and the circuit
//! breaker, and all of them never refusing a healthy service.

mod budget;
mod default_budget;
mod healthy_service;
mod ratio_budget;
mod throttle_breaker;
