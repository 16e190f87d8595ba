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
--   finish ttl (ms), the number of parts, then part indexes (from 0): those parts'
--          commit (or abort) applied, now or before; a finished part is never sent
--          again. Once every part is finished, the record is done: it leaves the
--          index and expires. Refused while preparing.
--   read   nothing: the record as it is.
-- Reply: {outcome, status, error, done, created ms, deadline ms, holders, finished},
--        outcome being "new", "found", "conflict" or "missing"; finished has one
--        character per part, "1" for a finished part, "0" for another ("" for none yet).
--
-- Fields: status, fp, body (the transfer, JSON), holders, created_ms, deadline_ms,
-- err (JSON), decided_ms, finished, done ("1"), done_ms.

local K_REC, K_IDX = KEYS[1], KEYS[2]
local action, id = ARGV[1], ARGV[2]

local function d(n) return string.format('%d', n) end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local r = redis.call('HMGET', K_REC, 'status', 'fp', 'err', 'done', 'created_ms', 'deadline_ms', 'holders',
  'finished')
local function reply(outcome)
  return {outcome, r[1] or '', r[3] or '', r[4] or '', r[5] or '', r[6] or '', r[7] or '', r[8] or ''}
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
  r = {'preparing', fp, false, false, d(now), deadline, holders, false}
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
elseif action == 'finish' then
  local ttl = ms(ARGV[3])
  if r[1] == 'preparing' then return redis.error_reply('ERR an undecided transfer has no part to finish') end
  if r[4] then return reply('found') end
  local f = r[8] or string.rep('0', ms(ARGV[4]))
  for i = 5, #ARGV do
    local k = ms(ARGV[i])
    if k >= #f then return redis.error_reply('ERR bad part argument') end
    f = string.sub(f, 1, k) .. '1' .. string.sub(f, k + 2)
  end
  if string.find(f, '0', 1, true) then
    redis.call('HSET', K_REC, 'finished', f)
  else
    redis.call('HSET', K_REC, 'finished', f, 'done', '1', 'done_ms', d(now))
    redis.call('PEXPIRE', K_REC, d(ttl))
    redis.call('ZREM', K_IDX, id)
    r[4] = '1'
  end
  r[8] = f
  return reply('found')
end
return redis.error_reply('ERR unknown action')
