-- Login throttling (issue #15): failed logins counted per username and per client address, so
-- repeated guessing backs off exponentially (LoginThrottle). In the database rather than in memory,
-- so the back-off holds across instances behind a load balancer and across restarts: an attacker
-- cannot reset it by waiting for a deploy or by spreading guesses over instances.
create table login_failures (
    -- 'username:<name>' or 'address:<ip>'.
    key text primary key,
    -- Failures since the last success (or since a quiet period longer than the throttle forgets).
    failures integer not null,
    last_failure_at timestamptz not null default clock_timestamp(),
    -- Attempts for this key are refused (429) until then; null while the free failures last.
    blocked_until timestamptz
);

create index login_failures_last_failure_at on login_failures (last_failure_at);
