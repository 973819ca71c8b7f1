-- wrk: each request takes the next path of $COAL_PATHS (one per line), in turn.
local paths = {}
for line in io.lines(os.getenv("COAL_PATHS")) do
  paths[#paths + 1] = line
end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
