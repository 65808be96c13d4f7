-- wrk: GET /account?id=ID with the API key, ID drawn at random from the file ACKED (one acknowledged account id a
-- line, read once at start), so every read is of an account that must exist. done() prints one JSON line of the
-- answers by status ({"200": n, "503": n, ...}) and the socket errors, summed over the threads.
local key = os.getenv("BROKER_API_KEY") or ""
local requests, count, i = {}, 0, 0
local threads = {}

setup = function(thread)
  table.insert(threads, thread)
end

init = function(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
  local ids = {}
  for line in io.lines(os.getenv("ACKED")) do
    if line ~= "" then table.insert(ids, line) end
  end
  for n = 1, 2048 do
    local id = ids[math.random(1, #ids)]:gsub(":", "%%3A")
    requests[n] = wrk.format("GET", "/account?id=" .. id, { ["Authorization"] = "Bearer " .. key })
  end
  count = 2048
  answers = {}
end

request = function()
  i = i % count + 1
  return requests[i]
end

response = function(status, headers, body)
  answers[status] = (answers[status] or 0) + 1
end

done = function(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local counted = thread:get("answers")
    for status, n in pairs(counted) do total[status] = (total[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(total) do table.insert(parts, string.format('"%d": %d', status, n)) end
  local e = summary.errors
  io.write(string.format('{"reads": %d, "seconds": %.1f, "answers": {%s}, "socket_errors": %d}\n',
    summary.requests, summary.duration / 1e6, table.concat(parts, ", "), e.connect + e.read + e.write + e.timeout))
end
