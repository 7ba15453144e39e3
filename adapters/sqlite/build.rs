//! `sqlx::migrate!` embeds the files of `migrations/`: rebuild when they change.

fn main() {
    println!("cargo::rerun-if-changed=migrations");
}
