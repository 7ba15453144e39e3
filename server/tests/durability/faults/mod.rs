//! Faults survived by the real binary: its PostgreSQL restarted under load, its Redis
//! stopped and started, and SIGKILL while 16 clients send with `Idempotency-Key`s.

mod idempotent_sigkill;
mod load;
mod pg_restart;
mod redis_restart;
