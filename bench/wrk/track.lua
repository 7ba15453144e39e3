-- wrk script: POST /v1/track for 100,000 recurring contacts (50,000 per wrk thread), as
-- posthorn-bench's `track` scenario: the first request of an address creates its contact,
-- the later ones change it (the event's data is merged into the contact's).
-- The secret key comes from the environment (POSTHORN_WRK_KEY).
local counter = 0
threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("POSTHORN_WRK_KEY")
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"email":"u%d-%d@bench.io","event":"bench-event-%d","data":{"seq":%d,"plan":"pro"}}',
    tid, counter % 50000, counter % 16, counter)
  return wrk.format(nil, "/v1/track", nil, body)
end
