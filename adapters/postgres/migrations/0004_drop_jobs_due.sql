-- Claims read `jobs_queued` and `jobs_leased` (0003); nothing reads `jobs_due` any more, and
-- keeping it up to date cost every job insert and state change one more index write.
DROP INDEX IF EXISTS jobs_due;
