-- wrk script: POST /v1/track for a contact that does not exist yet, every request.
-- Each wrk thread numbers its own requests; the thread's number keeps the addresses of the
-- threads apart. The secret key comes from the environment (POSTHORN_WRK_KEY).
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
    '{"email":"fresh%d-%d@bench.io","event":"bench-event-%d","data":{"seq":%d,"plan":"pro"}}',
    tid, counter, counter % 16, counter)
  return wrk.format(nil, "/v1/track", nil, body)
end
