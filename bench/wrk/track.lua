-- wrk script: POST /v1/track. By default every request names a contact that does not
-- exist yet (`track-fresh`); with POSTHORN_WRK_RECUR=N the addresses recur, N/2 per wrk
-- thread, as posthorn-bench's `track` scenario does with N = 100,000: the first request of
-- an address creates its contact, the later ones change it.
-- Each wrk thread numbers its own requests; the thread's number keeps the addresses of the
-- threads apart. The secret key comes from the environment (POSTHORN_WRK_KEY).
local counter = 0
threads = 0
local per_thread = nil

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("POSTHORN_WRK_KEY")
  local recur = tonumber(os.getenv("POSTHORN_WRK_RECUR") or "")
  if recur then
    per_thread = math.max(1, math.floor(recur / 2))
  end
end

function request()
  counter = counter + 1
  local address
  if per_thread then
    address = string.format("u%d-%d", tid, counter % per_thread)
  else
    address = string.format("fresh%d-%d", tid, counter)
  end
  local body = string.format(
    '{"email":"%s@bench.io","event":"bench-event-%d","data":{"seq":%d,"plan":"pro"}}',
    address, counter % 16, counter)
  return wrk.format(nil, "/v1/track", nil, body)
end
