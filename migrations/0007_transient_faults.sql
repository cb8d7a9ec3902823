-- 0007_transient_faults: a job's transient faults (full disk, I/O error, database or storage
-- unavailable) are counted apart from its attempts, so an outage backs off for hours instead of
-- using up the attempts meant for faults of the photo itself.
--
-- transient_failures: transient faults in a row (the backoff doubles with each, up to a cap);
-- transient_since: when the first of them happened (the job fails once they have lasted too long).
-- Both are cleared when the job finishes or is re-queued.

alter table jobs add column transient_failures int not null default 0;
alter table jobs add column transient_since timestamptz;
