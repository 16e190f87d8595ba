#!lua flags=no-writes
-- atomledger state.lua, format 1: reads one holder's whole state in one consistent step.
--
-- KEYS: 1 meta, 2 balance, 3 frozen, 4 points, 5 coupons, 6 holds (as for apply.lua).
-- Reply: the HGETALL of each key, in KEYS order.
local out = {}
for i = 1, 6 do out[i] = redis.call('HGETALL', KEYS[i]) end
return out
