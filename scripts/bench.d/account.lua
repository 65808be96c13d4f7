-- wrk: GET /account?id=weibo:N with the API key, N random in [0, ACCOUNTS).
local accounts = tonumber(os.getenv("ACCOUNTS") or "10000")
local key = os.getenv("BROKER_API_KEY") or ""
math.randomseed(os.time())
request = function()
  local id = math.random(0, accounts - 1)
  return wrk.format("GET", "/account?id=weibo:" .. id, { ["Authorization"] = "Bearer " .. key })
end
