-- Replays a request list: wrk -s bench/wrk/mix.lua URL -- <requests file>
-- Each line of the file is METHOD <tab> path?query [<tab> JSON body [<tab> headers]], the
-- headers as "Name: value" pairs separated by "|" (an empty body field for a GET with headers).
-- Headers given to wrk with -H go on every request. Every thread starts at its own place in the
-- list and walks it round-robin. At the end, one JSON line (prefixed "WRKJSON ") gives
-- requests, errors and the latency distribution (wrk's, in microseconds).

local threads = {}
local counter = 1

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

local requests = {}

function init(args)
  local path = args[1]
  if path == nil then
    error("usage: wrk ... -s mix.lua URL -- <requests file>")
  end
  for line in io.lines(path) do
    local method, target, body, extra = line:match("^(%u+)\t([^\t]+)\t?([^\t]*)\t?(.*)$")
    if method ~= nil then
      local headers = {}
      for name, value in pairs(wrk.headers) do headers[name] = value end
      for name, value in extra:gmatch("([^:|]+):%s*([^|]*)") do headers[name] = value end
      if method == "POST" then
        headers["Content-Type"] = "application/json"
        requests[#requests + 1] = wrk.format("POST", target, headers, body)
      else
        requests[#requests + 1] = wrk.format(method, target, headers)
      end
    end
  end
  if #requests == 0 then
    error("no requests in " .. path)
  end
  -- Spread the threads over the list (7919 is a prime, so starts differ).
  counter = ((tid or 0) * 7919) % #requests + 1
end

function request()
  local r = requests[counter]
  counter = counter % #requests + 1
  return r
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
