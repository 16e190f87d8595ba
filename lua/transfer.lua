#!lua
-- atomledger transfer.lua, format 1: the record of one cross-holder transfer.
--
-- KEYS: 1 the record "{x:<id>}" (a hash), 2 the index of unfinished transfers of its slot
--       (a sorted set: transfer id scored by when the recovery worker should look at it).
-- ARGV: 1 action, 2 transfer id, then per action:
--   begin  fp, body, prepare timeout (ms), the parts' holders (comma-separated): creates
--          the record "preparing", due for recovery at the deadline; or finds it (a
--          different fp: conflict).
--   decide status ("committed" or "aborted"), error, retry (ms): the commit point.
--          Only a "preparing" record changes; one that has been decided keeps its
--          decision, whoever asks.
--   done   ttl (ms): every part is finished; the record leaves the index and expires.
--   read   nothing: the record as it is.
-- Reply: {outcome, status, error, done, created ms, deadline ms, holders}, outcome being
--        "new", "found", "conflict" or "missing".
--
-- Fields: status, fp, body (the transfer, JSON), holders, created_ms, deadline_ms,
-- err (JSON), decided_ms, done ("1"), done_ms.

local K_REC, K_IDX = KEYS[1], KEYS[2]
local action, id = ARGV[1], ARGV[2]

local function d(n) return string.format('%d', n) end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local r = redis.call('HMGET', K_REC, 'status', 'fp', 'err', 'done', 'created_ms', 'deadline_ms', 'holders')
local function reply(outcome)
  return {outcome, r[1] or '', r[3] or '', r[4] or '', r[5] or '', r[6] or '', r[7] or ''}
end

local function ms(s)
  if not s or not string.find(s, '^%d+$') or #s > 15 then error('bad ms argument') end
  return tonumber(s)
end

if action == 'begin' then
  local fp, body, timeout, holders = ARGV[3], ARGV[4], ms(ARGV[5]), ARGV[6]
  if r[1] then
    if r[2] ~= fp then return reply('conflict') end
    return reply('found')
  end
  local deadline = d(now + timeout)
  redis.call('ZADD', K_IDX, deadline, id)
  redis.call('HSET', K_REC, 'status', 'preparing', 'fp', fp, 'body', body, 'holders', holders,
    'created_ms', d(now), 'deadline_ms', deadline)
  r = {'preparing', fp, false, false, d(now), deadline, holders}
  return reply('new')
end

if not r[1] then return reply('missing') end

if action == 'read' then
  return reply('found')
elseif action == 'decide' then
  local to, err, retry = ARGV[3], ARGV[4], ms(ARGV[5])
  if to ~= 'committed' and to ~= 'aborted' then return redis.error_reply('ERR bad status argument') end
  if r[1] == 'preparing' then
    redis.call('ZADD', K_IDX, d(now + retry), id)
    redis.call('HSET', K_REC, 'status', to, 'err', err, 'decided_ms', d(now))
    r[1], r[3] = to, err
  end
  return reply('found')
elseif action == 'done' then
  local ttl = ms(ARGV[3])
  if r[1] ~= 'preparing' and not r[4] then
    redis.call('HSET', K_REC, 'done', '1', 'done_ms', d(now))
    redis.call('PEXPIRE', K_REC, d(ttl))
    redis.call('ZREM', K_IDX, id)
    r[4] = '1'
  end
  return reply('found')
end
return redis.error_reply('ERR unknown action')
