-- Claims since a job was enqueued or last put back with `retry`: a job whose leases keep
-- running out unsettled (it kills its worker, or outruns its lease) is given up after a few.
ALTER TABLE jobs ADD COLUMN claims integer NOT NULL DEFAULT 0;
