-- wrk: GET /account?id=weibo:N with the API key, N random in [0, ACCOUNTS).
-- Requests are formatted once in init, so wrk spends its share of the 2 cores on load, not Lua.
local accounts = tonumber(os.getenv("ACCOUNTS") or "10000")
local key = os.getenv("BROKER_API_KEY") or ""
local requests, count, i = {}, 4096, 0
-- SEED=N draws the same ids in every run (a warm-up then reads exactly the accounts the counted run reads).
init = function(args)
  local seed = tonumber(os.getenv("SEED") or "")
  math.randomseed(seed or (os.time() + tonumber(tostring({}):sub(8), 16) % 1000))
  for n = 1, count do
    local id = math.random(0, accounts - 1)
    requests[n] = wrk.format("GET", "/account?id=weibo:" .. id, { ["Authorization"] = "Bearer " .. key })
  end
end
request = function()
  i = i % count + 1
  return requests[i]
end
