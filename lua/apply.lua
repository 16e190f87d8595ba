#!lua
-- atomledger apply.lua, format 1: applies one instruction to one holder, all or nothing.
--
-- KEYS: 1 meta, 2 balance, 3 frozen, 4 points, 5 coupons, 6 holds, 7 idempotency record,
--       8 the slot's outbox stream, 9 the slot's expiry index.
-- ARGV: 1 holder, 2 instruction id, 3 request fingerprint, 4 idempotency ttl (ms, at least 1),
--       5 counterparty, 6 memo, 7 transfer id ("" outside a transfer), then six per op:
--       op, asset or leg, units, hold, coupon (for take and give: the other hold), ms
--       (ttl_ms of a new hold, a coupon's expires_ms, or the expiry a sweeper's release
--       requires of its hold). Units and ms are decimal digits.
--       Besides the contract's ops, four serve transfers (the engine sends them, clients
--       cannot): check (opens the transfer's hold, empty if nothing else fills it, so that
--       the part's commit or abort has a hold to consume; with units, checks that a credit
--       of them to the asset or leg, added to the instruction's earlier checks of it, would
--       not pass 2^53-1), take (units of a leg from a hold,
--       checked like a settle, into another hold this instruction creates; the first hold
--       stays open even if emptied, so that give can restore it), give (units of a leg
--       from a hold back into another hold if that one is open, else to available) and
--       close (a hold left empty by take; nothing if it is not open and empty).
-- Reply: {replayed (0 or 1), outcome}, outcome being "ok\n<result json>" or
--        "err\n<code>\n<op index>\n<detail>"; the detail is the figure that failed the check,
--        in minor units ("<asset>:<units>" for OVERFLOW, the coupon's state for COUPON_UNAVAILABLE).
--
-- Why it is shaped like this (each rule is a trap):
-- * Redis does not roll back a failed script: every read and check comes before the first
--   write, and after it nothing can fail.
-- * A key emptied by a delete vanishes, and touching it again fails during a slot
--   migration: each key gets at most one set-type write, then at most one delete, and all
--   deletes come last.
-- * Lua numbers are doubles: amounts arrive as digit strings, are matched strictly, stay
--   within 2^53-1, and become text again only through string.format('%d').
-- * EVAL runs the whole chunk on every call: every closure, table, string and
--   string.format is paid again each time. So each hash is read with one HMGET of all the
--   fields the ops name, at the first moment one of them is needed (where the lone HGET
--   was: a key is touched no earlier than before, so an instruction rejected early reads
--   no more keys); the result and the event's ops are written as JSON text, not built as
--   tables for cjson.encode; and each figure is formatted once, for the result and the
--   writes alike.

local MAX = 9007199254740991
local K_META, K_BAL, K_FRZ, K_PTS, K_CPN, K_HLD, K_TX, K_OUT, K_EXP =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local holder, id, fp, idem_ttl, cp, memo, xfer = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local fmt, find, concat = string.format, string.find, table.concat

-- Strict digits, 1 .. 2^53-1; nil for anything else.
local function units(s)
  if #s > 16 or not find(s, '^%d+$') then return nil end
  local v = tonumber(s)
  if v < 1 or v > MAX then return nil end
  return v
end

-- Idempotency: the same id always gets the same outcome.
local rec = redis.call('GET', K_TX)
if rec then
  local nl = find(rec, '\n', 1, true)
  if string.sub(rec, 1, nl - 1) ~= fp then return {0, 'err\nIDEMPOTENCY_CONFLICT\n-1\n'} end
  return {1, string.sub(rec, nl + 1)}
end

-- The TTL is checked here, before any write: SET ... PX 0 fails, and after the
-- balance write and the XADD that would leave half an instruction applied.
local nops = (#ARGV - 7) / 6
if nops < 1 or nops > 64 or nops ~= math.floor(nops) or not find(idem_ttl, '^[1-9]%d*$') or #idem_ttl > 15 then
  return {0, 'err\nINVALID_INSTRUCTION\n-1\nmalformed script arguments'}
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local meta = redis.call('HMGET', K_META, 'status', 'seq', 'digest')
local existed = meta[1] and true or false
local status = meta[1] or nil
local status0 = status
local seq = tonumber(meta[2] or '0')
local digest = meta[3] or ''

-- A rejection is recorded under its id, unless the holder does not exist:
-- nothing is ever written for an unknown holder.
local function reject(i, code, detail)
  local out = 'err\n' .. code .. '\n' .. fmt('%d', i) .. '\n' .. (detail or '')
  if existed then redis.call('SET', K_TX, fp .. '\n' .. out, 'PX', idem_ttl) end
  return {0, out}
end

-- The fields the ops name in balance and frozen (wa), coupons (wc) and holds (wh):
-- each list is what one HMGET reads, and maps a name to its place in the reply.
-- A whole-hold settle or release meets legs and coupons no op names: those are
-- read alone when met.
local wa, wc, wh = {}, {}, {}
for b = 8, #ARGV - 5, 6 do
  local op, a, h, c = ARGV[b], ARGV[b + 1], ARGV[b + 3], ARGV[b + 4]
  if a ~= '' and a ~= 'points' and not wa[a] and (op == 'credit' or op == 'debit' or op == 'freeze'
      or op == 'settle' or op == 'release' or op == 'give' or op == 'check') then
    wa[#wa + 1] = a; wa[a] = #wa
  end
  if op == 'lock_coupon' or op == 'grant_coupon' or op == 'redeem_coupon' then
    if not wc[c] then wc[#wc + 1] = c; wc[c] = #wc end
  end
  if h ~= '' and not wh[h] then wh[#wh + 1] = h; wh[h] = #wh end
  if (op == 'take' or op == 'give') and not wh[c] then wh[#wh + 1] = c; wh[c] = #wh end
end

-- The value of field name of key: from the hash's one read of the named fields
-- (made into *reply on first use; HGET when there is one, as its reply needs no
-- table), else alone; false when Redis has none.
local function read(key, names, reply, name)
  if not reply then
    if #names > 1 then reply = redis.call('HMGET', key, unpack(names))
    elseif #names == 1 then reply = {redis.call('HGET', key, names[1])}
    else reply = {} end
  end
  local j = names[name]
  if j then return reply[j], reply end
  return redis.call('HGET', key, name), reply
end

-- Everything read is cached; the *0 tables keep what Redis held, to write only changes.
local bal, bal0, frz, frz0, assets = {}, {}, {}, {}, {}
local bal_r, frz_r
local function asset(a)
  if bal[a] == nil then
    local b, f
    b, bal_r = read(K_BAL, wa, bal_r, a)
    f, frz_r = read(K_FRZ, wa, frz_r, a)
    bal[a], frz[a] = tonumber(b or '0'), tonumber(f or '0')
    bal0[a], frz0[a] = bal[a], frz[a]
    assets[#assets + 1] = a
  end
end

local pa, pf, pa0, pf0
local function points()
  if pa == nil then
    local p = redis.call('HMGET', K_PTS, 'available', 'frozen')
    pa, pf = tonumber(p[1] or '0'), tonumber(p[2] or '0')
    pa0, pf0 = pa, pf
  end
end

-- Coupon: "<state>" or "<state>|<expires ms>"; false when absent.
local cpn, cpn_dirty, cpn_order, cpn_r = {}, {}, {}, nil
local function coupon(c)
  if cpn[c] == nil then
    local raw
    raw, cpn_r = read(K_CPN, wc, cpn_r, c)
    if raw then
      local st, exp = string.match(raw, '^([^|]+)|?(%d*)$')
      cpn[c] = {st = st, exp = tonumber(exp) or 0}
    else
      cpn[c] = false
    end
    cpn_order[#cpn_order + 1] = c
  end
  return cpn[c]
end
local function set_coupon(c, st, exp)
  local v = cpn[c]
  if v then v.st = st else cpn[c] = {st = st, exp = exp} end
  cpn_dirty[c] = true
end

-- Hold: "<expires ms or 0>|<leg>=<units>,...|<coupon>,...". The table keeps
-- was_exp (false if Redis had no such hold), open, new (created by this
-- instruction); every field is in the constructor, which sizes the table once.
local hld, hld_order, hld_r = {}, {}, nil
local function hold(h)
  if hld[h] == nil then
    local v, raw = {legs = {}, cpns = {}, exp = 0, was_exp = false, open = false, new = false}, nil
    raw, hld_r = read(K_HLD, wh, hld_r, h)
    if raw then
      local exp, legs, cs = string.match(raw, '^(%d+)|([^|]*)|(.*)$')
      v.exp, v.was_exp, v.open = tonumber(exp), tonumber(exp), true
      for a, n in string.gmatch(legs, '([^,=]+)=(%d+)') do v.legs[a] = tonumber(n) end
      for c in string.gmatch(cs, '[^,]+') do v.cpns[#v.cpns + 1] = c end
    end
    hld[h] = v
    hld_order[#hld_order + 1] = h
  end
  return hld[h]
end
local function encode_hold(v)
  local names, legs = {}, {}
  for a in pairs(v.legs) do names[#names + 1] = a end
  table.sort(names)
  for j, a in ipairs(names) do legs[j] = a .. '=' .. fmt('%d', v.legs[a]) end
  return fmt('%d', v.exp) .. '|' .. concat(legs, ',') .. '|' .. concat(v.cpns, ',')
end

-- A hold-creating op (freeze, freeze_points, lock_coupon): the first op naming a new
-- hold creates it, later ones in the same instruction add to it.
local function hold_for_reserve(h, ttl)
  local v = hold(h)
  if v.open and not v.new then return nil, 'HOLD_EXISTS' end
  if not v.open then
    -- A hold that is not open has neither legs nor coupons: it was never
    -- opened, or closed by emptying it.
    v.open, v.new = true, true
    v.exp = (ttl > 0) and (now + ttl) or 0
  end
  return v
end

-- A JSON string, escaped as cjson escapes it (and no dearer than quoting by hand).
local q = cjson.encode

-- The event's ops, as JSON text: each op's entry is opened before its step runs,
-- which adds its movements (minor units) to it, and closed after.
local ev, nmv = {}, 0
local function move(a, from, to, n)
  ev[#ev + 1] = (nmv == 0 and ',"mv":[[' or ',[') .. q(a) .. ',"' .. from .. '","' .. to .. '","' .. fmt('%d', n) .. '"]'
  nmv = nmv + 1
end

-- Moves n of leg a out of the hold's frozen funds to 'avail' (release) or 'cp' (settle).
local function take_leg(v, a, n, to)
  if a == 'points' then
    points()
    if to == 'avail' then
      if pa + n > MAX then return 'OVERFLOW', 'points:' .. fmt('%d', pa) end
      pa = pa + n
    end
    pf = pf - n
  else
    asset(a)
    if to == 'avail' then
      if bal[a] + n > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', bal[a]) end
      bal[a] = bal[a] + n
    end
    frz[a] = frz[a] - n
  end
  v.legs[a] = v.legs[a] - n
  if v.legs[a] == 0 then v.legs[a] = nil end
  move(a, 'frozen', to, n)
end

local function close_if_empty(v)
  if next(v.legs) == nil and #v.cpns == 0 then v.open = false end
end

-- settle (to = 'cp') and release (to = 'avail'). A release with a non-zero
-- exp (the sweeper's) applies only to the hold of that expiry: a hold of the
-- same name opened since is another hold.
local function unhold(h, leg, amt, to, exp)
  local v = hold(h)
  if not v.open or (exp > 0 and v.exp ~= exp) then return 'HOLD_NOT_FOUND' end
  if to == 'cp' and v.exp > 0 and now >= v.exp then return 'HOLD_EXPIRED' end
  if leg == '' then
    local names = {}
    for a in pairs(v.legs) do names[#names + 1] = a end
    table.sort(names)
    for _, a in ipairs(names) do
      local code, detail = take_leg(v, a, v.legs[a], to)
      if code then return code, detail end
    end
    for _, c in ipairs(v.cpns) do
      local cv = coupon(c)
      set_coupon(c, to == 'cp' and 'used' or 'available', cv and cv.exp or 0)
    end
    v.cpns = {}
  else
    local have = v.legs[leg]
    if not have then return 'EXCEEDS_HOLD', '' end
    local n = have
    if amt ~= '0' then
      n = units(amt)
      if not n then return 'INVALID_AMOUNT' end
      if n > have then return 'EXCEEDS_HOLD', fmt('%d', have) end
    end
    local code, detail = take_leg(v, leg, n, to)
    if code then return code, detail end
  end
  close_if_empty(v)
end

-- take: n of leg from hold h (checked as a settle would be) into hold dst, which
-- this instruction creates; the funds stay frozen. h stays open even when
-- emptied: an abort gives back into it, a commit closes it.
local function take(h, leg, amt, dst)
  local v = hold(h)
  if not v.open then return 'HOLD_NOT_FOUND' end
  if v.exp > 0 and now >= v.exp then return 'HOLD_EXPIRED' end
  local w, code = hold_for_reserve(dst, 0)
  if not w then return code end
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  local have = v.legs[leg]
  if not have then return 'EXCEEDS_HOLD', '' end
  if n > have then return 'EXCEEDS_HOLD', fmt('%d', have) end
  v.legs[leg] = (have > n) and (have - n) or nil
  w.legs[leg] = (w.legs[leg] or 0) + n
end

-- check: a transfer part's prepare opens the transfer's hold h (a part that only
-- receives leaves it empty: its commit consumes it all the same, so that a commit run
-- twice fails HOLD_NOT_FOUND rather than credit twice), and checks that the credit
-- its commit will make of amt of a fits, with the earlier checks of a (incoming).
local incoming = {}
local function check(h, a, amt)
  local v, code = hold_for_reserve(h, 0)
  if not v then return code end
  if amt == '0' then return end
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  local have
  if a == 'points' then
    points()
    have = pa
  else
    asset(a)
    have = bal[a]
  end
  local want = (incoming[a] or 0) + n
  if have + want > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', have) end
  incoming[a] = want
end

-- give: n of leg from hold h back into hold origin if it is still open, else to
-- available (a release).
local function give(h, leg, amt, origin)
  local v = hold(h)
  if not v.open then return 'HOLD_NOT_FOUND' end
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  local have = v.legs[leg]
  if not have then return 'EXCEEDS_HOLD', '' end
  if n > have then return 'EXCEEDS_HOLD', fmt('%d', have) end
  local w = hold(origin)
  if not w.open then
    local code, detail = take_leg(v, leg, n, 'avail')
    if code then return code, detail end
  else
    v.legs[leg] = (have > n) and (have - n) or nil
    w.legs[leg] = (w.legs[leg] or 0) + n
  end
  close_if_empty(v)
end

local function step(op, a, amt, h, c, ms)
  if op == 'open' then
    if status then return 'HOLDER_EXISTS' end
    status = 'active'
    return
  end
  if not status then return 'HOLDER_NOT_FOUND' end
  if status == 'suspended' and (op == 'debit' or op == 'freeze' or op == 'freeze_points'
      or op == 'lock_coupon' or op == 'spend_points' or op == 'redeem_coupon') then
    return 'HOLDER_SUSPENDED'
  end
  -- Most ops have no ms: '0' skips the pattern and tonumber, both dear.
  if ms == '0' then ms = 0
  elseif find(ms, '^%d+$') then ms = tonumber(ms)
  else return 'INVALID_INSTRUCTION' end

  if op == 'suspend' then status = 'suspended'
  elseif op == 'resume' then status = 'active'
  elseif op == 'check' then return check(h, a, amt)
  elseif op == 'take' then return take(h, a, amt, c)
  elseif op == 'give' then return give(h, a, amt, c)
  elseif op == 'close' then
    local v = hold(h)
    if v.open then close_if_empty(v) end
  elseif op == 'settle' or op == 'release' then
    return unhold(h, a, amt, op == 'settle' and 'cp' or 'avail', ms)
  elseif op == 'lock_coupon' then
    local v, code = hold_for_reserve(h, ms)
    if not v then return code end
    local cv = coupon(c)
    if not cv then return 'COUPON_NOT_FOUND' end
    if cv.exp > 0 and now >= cv.exp then return 'COUPON_EXPIRED' end
    if cv.st ~= 'available' then return 'COUPON_UNAVAILABLE', cv.st end
    set_coupon(c, 'held:' .. h, cv.exp)
    v.cpns[#v.cpns + 1] = c
  elseif op == 'grant_coupon' then
    if coupon(c) then return 'COUPON_EXISTS' end
    set_coupon(c, 'available', ms)
  elseif op == 'redeem_coupon' then
    local cv = coupon(c)
    if not cv then return 'COUPON_NOT_FOUND' end
    if cv.exp > 0 and now >= cv.exp then return 'COUPON_EXPIRED' end
    if cv.st ~= 'available' then return 'COUPON_UNAVAILABLE', cv.st end
    set_coupon(c, 'used', cv.exp)
  else
    local n = units(amt)
    local v
    if op == 'freeze' or op == 'freeze_points' then
      local code
      v, code = hold_for_reserve(h, ms)
      if not v then return code end
    end
    if not n then return 'INVALID_AMOUNT' end
    if op == 'credit' then
      asset(a)
      if bal[a] + n > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', bal[a]) end
      bal[a] = bal[a] + n
      move(a, 'cp', 'avail', n)
    elseif op == 'debit' then
      asset(a)
      if bal[a] < n then return 'INSUFFICIENT_FUNDS', fmt('%d', bal[a]) end
      bal[a] = bal[a] - n
      move(a, 'avail', 'cp', n)
    elseif op == 'freeze' then
      asset(a)
      if bal[a] < n then return 'INSUFFICIENT_FUNDS', fmt('%d', bal[a]) end
      if frz[a] + n > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', frz[a]) end
      bal[a], frz[a] = bal[a] - n, frz[a] + n
      v.legs[a] = (v.legs[a] or 0) + n
      move(a, 'avail', 'frozen', n)
    elseif op == 'freeze_points' then
      points()
      if pa < n then return 'INSUFFICIENT_POINTS', fmt('%d', pa) end
      if pf + n > MAX then return 'OVERFLOW', 'points:' .. fmt('%d', pf) end
      pa, pf = pa - n, pf + n
      v.legs.points = (v.legs.points or 0) + n
      move('points', 'avail', 'frozen', n)
    elseif op == 'earn_points' then
      points()
      if pa + n > MAX then return 'OVERFLOW', 'points:' .. fmt('%d', pa) end
      pa = pa + n
      move('points', 'cp', 'avail', n)
    elseif op == 'spend_points' then
      points()
      if pa < n then return 'INSUFFICIENT_POINTS', fmt('%d', pa) end
      pa = pa - n
      move('points', 'avail', 'cp', n)
    else
      return 'INVALID_INSTRUCTION'
    end
  end
end

for i = 0, nops - 1 do
  local b = 8 + i * 6
  local op, a, amt, h, c, ms = ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5]
  local e = (i == 0 and '[{"op":' or ',{"op":') .. q(op)
  if a ~= '' then e = e .. ',"asset":' .. q(a) end
  if amt ~= '0' then e = e .. ',"units":' .. q(amt) end
  if h ~= '' then e = e .. ',"hold":' .. q(h) end
  if c ~= '' then e = e .. ((op == 'take' or op == 'give') and ',"to":' or ',"coupon":') .. q(c) end
  if ms ~= '0' then e = e .. ',"ms":' .. q(ms) end
  ev[#ev + 1] = e
  nmv = 0
  local code, detail = step(op, a, amt, h, c, ms)
  if code then return reject(i, code, detail) end
  ev[#ev + 1] = nmv > 0 and ']}' or '}'
end
ev[#ev + 1] = ']'

-- Every check passed. Build the result (still reading), then write. The text
-- of each figure and stored value is made once, for the result and the writes.
seq = seq + 1
local sseq, ts = fmt('%d', seq), fmt('%d', now)
local bal_s, frz_s, pa_s, pf_s, cpn_s, hld_s = {}, {}, nil, nil, {}, {}
local r = {'{"s":"', sseq, '","st":', q(status), ',"b":{'}
for j, a in ipairs(assets) do
  bal_s[j], frz_s[j] = fmt('%d', bal[a]), fmt('%d', frz[a])
  r[#r + 1] = (j > 1 and ',' or '') .. q(a) .. ':["' .. bal_s[j] .. '","' .. frz_s[j] .. '"]'
end
r[#r + 1] = '},"c":{'
local sep = ''
for _, c in ipairs(cpn_order) do
  local v = cpn[c]
  if v then
    cpn_s[c] = v.exp > 0 and (v.st .. '|' .. fmt('%d', v.exp)) or v.st
    r[#r + 1] = sep .. q(c) .. ':' .. q(cpn_s[c])
    sep = ','
  end
end
r[#r + 1] = '},"h":{'
sep = ''
for _, h in ipairs(hld_order) do
  if hld[h].open then
    hld_s[h] = encode_hold(hld[h])
    r[#r + 1] = sep .. q(h) .. ':' .. q(hld_s[h])
    sep = ','
  end
end
r[#r + 1] = '}'
if pa ~= nil then
  pa_s, pf_s = fmt('%d', pa), fmt('%d', pf)
  r[#r + 1] = ',"p":["' .. pa_s .. '","' .. pf_s .. '"]'
end
r[#r + 1] = '}'
local result = concat(r)
local ops_json = concat(ev)
-- Digest version 2 (the event's dv): each term as <byte length>:<bytes>, xfer
-- always, so that no term can pass for another (a memo may hold a newline).
digest = redis.sha1hex(fmt('%d', #digest) .. ':' .. digest .. fmt('%d', #holder) .. ':' .. holder ..
  fmt('%d', #sseq) .. ':' .. sseq .. fmt('%d', #id) .. ':' .. id .. fmt('%d', #fp) .. ':' .. fp ..
  fmt('%d', #ts) .. ':' .. ts .. fmt('%d', #cp) .. ':' .. cp .. fmt('%d', #ops_json) .. ':' .. ops_json ..
  fmt('%d', #result) .. ':' .. result .. fmt('%d', #memo) .. ':' .. memo .. fmt('%d', #xfer) .. ':' .. xfer)

-- The slot's outbox and expiry index are written without being read: a key of
-- another type there must fail the script here, before its first write.
redis.call('XLEN', K_OUT)
redis.call('ZCARD', K_EXP)

-- Writes: sets first, deletes last.
local m = {'HSET', K_META, 'seq', sseq, 'digest', digest}
if status ~= status0 then m[#m + 1] = 'status'; m[#m + 1] = status end
if not existed then m[#m + 1] = 'created_ms'; m[#m + 1] = ts end
redis.call(unpack(m))

local cmd = {'HSET', K_BAL}
for j, a in ipairs(assets) do
  if bal[a] ~= bal0[a] then cmd[#cmd + 1] = a; cmd[#cmd + 1] = bal_s[j] end
end
if #cmd > 2 then redis.call(unpack(cmd)) end
-- A frozen field at zero goes away (below, with the deletes).
local frz_del = {}
cmd = {'HSET', K_FRZ}
for j, a in ipairs(assets) do
  if frz[a] > 0 then
    if frz[a] ~= frz0[a] then cmd[#cmd + 1] = a; cmd[#cmd + 1] = frz_s[j] end
  elseif frz0[a] > 0 then
    frz_del[#frz_del + 1] = a
  end
end
if #cmd > 2 then redis.call(unpack(cmd)) end
if pa ~= nil and (pa ~= pa0 or pf ~= pf0) then
  redis.call('HSET', K_PTS, 'available', pa_s, 'frozen', pf_s)
end
cmd = {'HSET', K_CPN}
for _, c in ipairs(cpn_order) do
  if cpn_dirty[c] then cmd[#cmd + 1] = c; cmd[#cmd + 1] = cpn_s[c] end
end
if #cmd > 2 then redis.call(unpack(cmd)) end

local hset, hdel, zadd, zrem = {'HSET', K_HLD}, {'HDEL', K_HLD}, {'ZADD', K_EXP}, {'ZREM', K_EXP}
for _, h in ipairs(hld_order) do
  local v = hld[h]
  local member = holder .. ' ' .. h
  if v.open then
    hset[#hset + 1] = h; hset[#hset + 1] = hld_s[h]
  elseif v.was_exp then
    hdel[#hdel + 1] = h
  end
  local exp = v.open and v.exp or 0
  if exp > 0 and exp ~= v.was_exp then
    zadd[#zadd + 1] = fmt('%d', exp); zadd[#zadd + 1] = member
  elseif exp == 0 and (v.was_exp or 0) > 0 then
    zrem[#zrem + 1] = member
  end
end
if #hset > 2 then redis.call(unpack(hset)) end
if #zadd > 2 then redis.call(unpack(zadd)) end

local xadd = {'XADD', K_OUT, '*', 'holder', holder, 'seq', sseq, 'id', id, 'fp', fp, 'ts', ts, 'cp', cp,
  'ops', ops_json, 'state', result, 'digest', digest, 'dv', '2', 'memo', memo}
if xfer ~= '' then xadd[#xadd + 1] = 'xfer'; xadd[#xadd + 1] = xfer end
redis.call(unpack(xadd))
local out = 'ok\n' .. result
redis.call('SET', K_TX, fp .. '\n' .. out, 'PX', idem_ttl)

if #frz_del > 0 then redis.call('HDEL', K_FRZ, unpack(frz_del)) end
if #hdel > 2 then redis.call(unpack(hdel)) end
if #zrem > 2 then redis.call(unpack(zrem)) end
return {0, out}
