-- The claim query reads queued jobs in (run_at, id) order and expired leases in
-- (lease_until, id) order, each from its own partial index, so a claim touches only the
-- rows it takes however many jobs are waiting.
CREATE INDEX jobs_queued ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until, id) WHERE state = 'running';
