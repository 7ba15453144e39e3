-- Dead jobs are listed for operators oldest first by id (`Jobs::dead`), from their own
-- partial index, so the listing does not scan the queue however many jobs are waiting.
CREATE INDEX jobs_dead ON jobs (id) WHERE state = 'dead';
