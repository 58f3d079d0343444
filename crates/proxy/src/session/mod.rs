//! One proxied session: every message passes between the client and the server; `tools/call`
//! requests are classified, gated and journaled, and a failure may roll the session back.
//!
//! The session is driven by an event loop ([`run`](Session::run)) over a closed set of inputs;
//! a call goes through stages, each in its own module:
//!
//! * `classify` — the server's tools and the class of each;
//! * `gate` — the policy's decision, the approval it waits for (`impact` is what an approver
//!   is shown), the verdict journaled;
//! * `journal` — every record, the call's intent before it is forwarded and its outcome before
//!   it is answered;
//! * `forward` — messages and the session's own requests to the server;
//! * `rollback` — the policy's `on-failure` after a failed call (`before` takes the
//!   before-images a rollback may need), within the call's scope (`scope`).
//!
//! `client` and `server` route each side's messages; `output` writes the client's side;
//! `state` holds what every stage shares.

mod before;
mod call;
mod classify;
mod client;
mod forward;
mod gate;
mod impact;
mod input;
mod journal;
mod output;
mod rollback;
mod run;
mod scope;
mod server;
mod state;

#[cfg(test)]
mod tests;

pub use journal::redacted_record;
pub use state::Session;
