#!lua name=atomledger_v2
-- atomledger, key format 2: the Redis Functions library. Its name carries the format version,
-- so that two versions can live side by side during an upgrade.
--
-- FCALL apply 4 <holder hash> <idempotency record> <slot's outbox> <slot's expiry index>
--   holder, instruction id, request fingerprint, idempotency ttl (ms, at least 1), counterparty,
--   memo, transfer id ("" outside a transfer), then six per op: op, asset or leg, units, hold,
--   coupon (for take and give: the other hold), ms (ttl_ms of a new hold, a coupon's expires_ms,
--   or the expiry a sweeper's release requires of its hold). Units and ms are decimal digits,
--   "0" when absent.
--   Besides the contract's ops, four serve transfers (the engine sends them, clients cannot):
--   check (opens the transfer's hold, empty if nothing else fills it, so that the part's commit
--   or abort has a hold to consume; with units, checks that a credit of them to the asset or
--   leg, added to the call's earlier checks of it, would not pass 2^53-1), take (units of a
--   leg from a hold, checked like a settle, into another hold this instruction creates; the first hold stays open even if
--   emptied, so that give can restore it), give (units of a leg from a hold back into another
--   hold if that one is open, else to available) and close (a hold left empty by take; nothing
--   if it is not open and empty).
--   Reply: {replayed (0 or 1), outcome}, outcome being "ok\n<result json>" ("ok\n" and the
--   idempotency record's short form of it for a replay, below) or
--   "err\n<code>\n<op index>\n<detail>"; the detail is the figure that failed the check, in
--   minor units ("<asset>:<units>" for OVERFLOW, the coupon's state for COUPON_UNAVAILABLE).
--
-- FCALL apply_json 4 <holder hash> <idempotency record> <slot's outbox> <slot's expiry index>
--   <instruction json> [idempotency ttl (ms), default 86400000]
--   The JSON door, for clients in any language (docs/json-door.md): the contract's instruction
--   {"id","holder","counterparty"?,"memo"?,"ops":[...]} with every amount in minor units as a
--   string of digits (a JSON number is INVALID_AMOUNT: cjson would make it an inexact double),
--   ttl_ms and expires_ms JSON integers. It checks what the engine checks before Redis (codes
--   INVALID_INSTRUCTION, INVALID_ID, INVALID_AMOUNT, TOO_MANY_OPS; UNKNOWN_ASSET only for an
--   asset code of the wrong form, as the asset registry lives in the engine), writing nothing
--   when a check fails, then runs apply with the fingerprint sha1hex(json text). Same reply.
--
-- FCALL transfer 2 <transfer record> <slot's index of unfinished transfers>
--   action, transfer id, then per action:
--   begin  fp, body, prepare timeout (ms), the parts' holders (comma-separated), then for a
--          transfer with one payer (docs/transfers.md) the payer's part index and how long
--          (ms) its steps may be sent again (their idempotency records' life), both "" for the
--          two phases, then the idempotency ttl (ms) every driver gives the steps' records, the
--          fences and the done record (optional): creates the record "preparing", due for
--          recovery at the deadline; or finds it (another fp: conflict).
--   decide status ("committed" or "aborted"), error, retry (ms): the commit point. Only a
--          "preparing" record changes; one that has been decided keeps its decision. Then
--          finish's arguments, if any follow: those parts finished in the same run, when the
--          decision that stands is this one (a one-payer transfer's last step).
--   finish ttl (ms), the number of parts, then part indexes (from 0): those parts' commit (or
--          abort) applied, now or before; a finished part is never sent again. Once every part
--          is finished, the record is done: it leaves the index and expires. Refused while
--          preparing.
--   read   nothing: the record as it is.
--   Reply: {outcome, status, error, done, created ms, deadline ms, holders, finished, payer,
--   resend until ms, ttl ms}, outcome being "new", "found", "conflict" or "missing"; finished has
--   one character per part, "1" for a finished part, "0" for another ("" for none yet); payer and
--   resend until "" for a two-phase transfer, ttl "" for a record begun without it. Record
--   fields: status, fp, body, holders, created_ms, deadline_ms, err, decided_ms, finished, done
--   ("1"), done_ms, payer, until_ms, ttl_ms.
--
-- The holder hash: status, seq, digest, created_ms; b:<asset> and f:<asset> available and frozen
-- minor units; p:a and p:f points; c:<coupon> "<state>" or "<state>|<expires ms>"; h:<hold>
-- "<expires ms or 0>|<leg>=<units>,...|<coupon>,...". A frozen field at zero and a closed hold
-- are deleted; status and seq never are, so the hash never vanishes under a call.
-- The idempotency record: the first 16 characters of the fingerprint, then, for an applied
-- instruction, what its answer needs of the result, short: "<seq>" and for each touched
-- account " b<asset>/<available>/<frozen>", " c<coupon>/<state>", " h<hold>/<hold>",
-- " p<available>/<frozen>", in the result's order; for a rejection
-- "err\n<code>\n<op index>\n<detail>" (none for the sweeper's release, id "sweep-...", which
-- tries again on its next pass). A replay answers "ok\n" and that short form.
--
-- Why it is shaped like this (each rule is a trap):
-- * Redis does not roll back a failed call: every read and check comes before the first write,
--   and after it nothing can fail. The first write is the XADD (a stream of another type fails
--   there); the expiry index, written only when a hold with a ttl opens or closes, has its type
--   checked first.
-- * A key emptied by a delete vanishes, and touching it again fails during a slot migration:
--   one HSET of the holder hash, then at most one HDEL, deletes last.
-- * Lua numbers are doubles: amounts arrive as digit strings, are matched strictly, stay within
--   2^53-1, and become text again only through string.format('%d').
-- * Per call only the call's own work: helpers and the handler table are built once, when the
--   library loads; the holder hash is read with one HMGET of every field the ops name (a
--   whole-hold settle or release reads the legs and coupons it meets on its own); each figure
--   is formatted once, for the result and the writes alike, and not at all when it did not
--   change. The tables a call fills (the field list, the per-asset figures, the event's, the
--   result's, the record's and the HSET's pieces) are made once and emptied per call: a table
--   made or grown per call is paid again by the garbage collector. A pattern search, a
--   tonumber or a string.format each costs a third of a redis.call: docs/benchmarks.md prices
--   them, and the code avoids them where the text at hand already says the answer.
-- * The "-- stage:" lines name the parts of apply that the bench's breakdown times: it runs
--   copies of the function that stop at each. They stand between statements of apply's own block.
-- * Redis 7.0 lets a library's load-time code reach only `redis` (and that without call): the
--   standard libraries and redis.call are bound on the first call.

local MAX = 9007199254740991
-- Lua 5.1 passes at most about 8,000 values to one call: a write with more arguments would fail,
-- and after the first write nothing may fail. An instruction that would change more fields than
-- that (thousands of coupons settled at once) is refused before it writes anything.
local MAX_WRITE_ARGS = 7000

local fmt, find, match, gmatch, sub, byte, concat, sort, floor, call, sha1hex, unpk
local function bind()
  fmt, find, match, gmatch, sub, byte = string.format, string.find, string.match, string.gmatch, string.sub, string.byte
  concat, sort, floor = table.concat, table.sort, math.floor
  call, sha1hex, unpk = redis.call, redis.sha1hex, unpack
end

-- "<n>:" for every byte length n a digest term usually has, made once: the digest's encoding
-- then costs a table lookup per term, not a string.format. (".." prints these small integers
-- exactly; rule 5 is about amounts, which may pass 14 digits.)
local LENS = {}
for n = 0, 2047 do LENS[n] = n .. ':' end
-- "000" to "999": the milliseconds of TIME's microseconds, so the event's ts is TIME's seconds
-- and these three digits, not a string.format.
local MS3, MSN = {}, {}
for n = 0, 999 do
  MS3[n] = (n < 10 and '00' or n < 100 and '0' or '') .. n
  MSN[n .. ''] = n
end
local DIGIT = {'1', '2', '3', '4', '5', '6', '7', '8', '9'} -- DIGIT[d]: the text of d
local sec_text, sec_ms -- TIME's seconds at the last call, and as ms

-- The state of the call under way. A function runs to its end before the next one starts, so
-- these are set at its start and read by the helpers below.
local K, now, ts, status -- ts: now as text
local ttl_ok -- the last idempotency ttl found well formed
-- The holder hash's fields read: fields[1 .. nn] their names, fields[name] its place; raw the
-- values. The table lives as long as the library: each call removes the previous call's names.
local fields, raw, nn = {'status', 'seq', 'digest', status = 1, seq = 2, digest = 3}, nil, 3
-- The tables below are made when an op first needs them (nil until then): a call pays only for
-- the kinds of account it touches.
-- Per asset touched, assets[1 .. na]: available and frozen, now and as read (numbers, and the
-- text read, which serves again when the figure did not change). Made once, emptied per call.
local bal, bal0, frz, frz0, bs0, fs0, assets, na = {}, {}, {}, {}, {}, {}, {}, 0
local pa, pf, pa0, pf0               -- points, nil until touched
local cpn, cpn_dirty, cpn_order      -- coupon -> {st, exp} or false
local hld, hld_order                 -- hold -> {legs, cpns, exp, was_exp, open, new}
local nmv                            -- movements in the op under way
-- The event's ops as JSON text, in pieces: ev[1 .. ne]. The table lives as long as the library,
-- so a call fills it without making it or growing it again (what lies past ne is stale).
local ev, ne = {}, 0
-- The same for the result's JSON (RB), the idempotency record (KB) and the HSET (HS).
local RB, rn, KB, kn, HS, hn = {}, 0, {}, 0, {}, 0
local incoming                       -- per asset or leg, the credits check has let through

local NONE = {} -- an empty list, never written
-- Text that JSON need not escape, without the stored hold's separators ("|", ",", "=": a name
-- holding one would read back as other coupons or legs). Anchored, so one match walks the text
-- once (an unanchored search of the characters to escape starts a match at every position).
local SAFE = '^[^%c"\\|,=]*$'

-- Strict digits, 1 .. 2^53-1; nil for anything else.
local function units(s)
  if #s > 16 or not find(s, '^%d+$') then return nil end
  local v = tonumber(s)
  if v < 1 or v > MAX then return nil end
  return v
end

-- A field of the holder hash: from the call's one HMGET, or alone when the ops did not name it.
local function get(f)
  local j = fields[f]
  if j then return raw[j] end
  local v = call('HGET', K, f)
  nn = nn + 1
  fields[nn], fields[f], raw[nn] = f, nn, v
  return v
end

-- want adds a field to the HMGET.
local function want(f)
  if not fields[f] then
    nn = nn + 1
    fields[nn], fields[f] = f, nn
  end
end
local function want_leg(a)
  if a == 'points' then want('p:a'); want('p:f')
  elseif a ~= '' then want('b:' .. a); want('f:' .. a) end
end

-- The fields each op names, by op (a, h, c: asset or leg, hold, coupon or other hold).
local NAMES = {
  credit = function(a) want_leg(a) end,
  debit = function(a) want_leg(a) end,
  freeze = function(a, h) want_leg(a); want('h:' .. h) end,
  freeze_points = function(_, h) want_leg('points'); want('h:' .. h) end,
  lock_coupon = function(_, h, c) want('h:' .. h); want('c:' .. c) end,
  settle = function(a, h) want('h:' .. h); want_leg(a) end,
  release = function(a, h) want('h:' .. h); want_leg(a) end,
  earn_points = function() want_leg('points') end,
  spend_points = function() want_leg('points') end,
  grant_coupon = function(_, _, c) want('c:' .. c) end,
  redeem_coupon = function(_, _, c) want('c:' .. c) end,
  take = function(_, h, c) want('h:' .. h); want('h:' .. c) end,
  give = function(a, h, c) want('h:' .. h); want('h:' .. c); want_leg(a) end,
  close = function(_, h) want('h:' .. h) end,
  check = function(a, h) want('h:' .. h); want_leg(a) end,
}

-- The ops that take value out: a suspended holder is refused them (instructions.Ops says the same).
local TAKES_OUT = {debit = true, freeze = true, freeze_points = true, lock_coupon = true,
  spend_points = true, redeem_coupon = true}

local function asset(a)
  if bal[a] == nil then
    local bs, fs = get('b:' .. a) or '0', get('f:' .. a) or '0'
    na = na + 1
    assets[na], bs0[a], fs0[a] = a, bs, fs
    bal[a], frz[a] = tonumber(bs), fs == '0' and 0 or tonumber(fs) -- frozen is mostly absent
    bal0[a], frz0[a] = bal[a], frz[a]
  end
end

local function points()
  if pa == nil then
    local f = get('p:f')
    pa, pf = tonumber(get('p:a') or '0'), f and tonumber(f) or 0
    pa0, pf0 = pa, pf
  end
end

local function coupon(c)
  if not cpn then cpn, cpn_dirty, cpn_order = {}, {}, {} end
  if cpn[c] == nil then
    local v = get('c:' .. c)
    if v then
      -- "<state>" or "<state>|<expires ms>": a plain search, dearer patterns only for an expiry.
      local bar = find(v, '|', 1, true)
      if bar then
        cpn[c] = {st = sub(v, 1, bar - 1), exp = tonumber(sub(v, bar + 1)) or 0}
      else
        cpn[c] = {st = v, exp = 0}
      end
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

-- was_exp is false if Redis had no such hold; new, if this instruction created it.
local function hold(h)
  if not hld then hld, hld_order = {}, {} end
  local v = hld[h]
  if v == nil then
    v = {legs = {}, cpns = {}, exp = 0, was_exp = false, open = false, new = false}
    local s = get('h:' .. h)
    if s then
      local exp, legs, cs = match(s, '^(%d+)|([^|]*)|(.*)$')
      v.exp, v.was_exp, v.open = tonumber(exp), tonumber(exp), true
      for a, n in gmatch(legs, '([^,=]+)=(%d+)') do v.legs[a] = tonumber(n) end
      for c in gmatch(cs, '[^,]+') do v.cpns[#v.cpns + 1] = c end
    end
    hld[h] = v
    hld_order[#hld_order + 1] = h
  end
  return v
end
local function encode_hold(v)
  local one = next(v.legs)
  local legs = ''
  if one and next(v.legs, one) == nil then
    legs = one .. '=' .. fmt('%d', v.legs[one]) -- one leg, the usual hold: no lists to sort
  elseif one then
    local names_, ls = {}, {}
    for a in pairs(v.legs) do names_[#names_ + 1] = a end
    sort(names_)
    for j, a in ipairs(names_) do ls[j] = a .. '=' .. fmt('%d', v.legs[a]) end
    legs = concat(ls, ',')
  end
  local cs = v.cpns
  return fmt('%d', v.exp) .. '|' .. legs .. '|' .. (#cs == 0 and '' or #cs == 1 and cs[1] or concat(cs, ','))
end

-- The first op naming a new hold creates it, later ones in the same instruction add to it.
local function hold_for_reserve(h, ttl)
  local v = hold(h)
  if v.open and not v.new then return nil, 'HOLD_EXISTS' end
  if not v.open then
    -- A hold that is not open has neither legs nor coupons: never opened, or closed by emptying.
    v.open, v.new = true, true
    v.exp = (ttl > 0) and (now + ttl) or 0
  end
  return v
end

-- ns: the amount's text as the op gave it, used as it is when it has no leading zero (units has
-- matched it, so it is then n's own decimal form), which spares a string.format.
local function move(a, from, to, n, ns)
  if not ns or byte(ns, 1) == 48 then ns = fmt('%d', n) end
  ne = ne + 1
  ev[ne] = (nmv == 0 and ',"mv":[["' or ',["') .. a .. '","' .. from .. '","' .. to .. '","' .. ns .. '"]'
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

-- settle (to = 'cp') and release (to = 'avail'). A release with a non-zero exp (the sweeper's)
-- applies only to the hold of that expiry: a hold of the same name opened since is another.
local function unhold(h, leg, amt, to, exp)
  local v = hold(h)
  if not v.open or (exp > 0 and v.exp ~= exp) then return 'HOLD_NOT_FOUND' end
  if to == 'cp' and v.exp > 0 and now >= v.exp then return 'HOLD_EXPIRED' end
  if leg == '' then
    local ls = {}
    for a in pairs(v.legs) do ls[#ls + 1] = a end
    sort(ls)
    for _, a in ipairs(ls) do
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

-- The checks of a coupon that is to be used or held.
local function usable(cv)
  if not cv then return 'COUPON_NOT_FOUND' end
  if cv.exp > 0 and now >= cv.exp then return 'COUPON_EXPIRED' end
  if cv.st ~= 'available' then return 'COUPON_UNAVAILABLE', cv.st end
end

-- One handler per op: (asset or leg, units, hold, coupon or other hold, ms as a number) ->
-- nothing, or an error code and its detail.
local OPS = {}
function OPS.open()
  if status then return 'HOLDER_EXISTS' end
  status = 'active'
end
function OPS.suspend() status = 'suspended' end
function OPS.resume() status = 'active' end
-- check: a transfer part's prepare opens the transfer's hold h (a part that only receives leaves
-- it empty: its commit consumes it all the same, so that a commit run twice fails HOLD_NOT_FOUND
-- rather than credit twice), and checks that the credit its commit will make of amt of a fits,
-- with the call's earlier checks of a (incoming).
function OPS.check(a, amt, h)
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
  incoming = incoming or {}
  local total = (incoming[a] or 0) + n
  if have + total > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', have) end
  incoming[a] = total
end
function OPS.credit(a, amt)
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  asset(a)
  if bal[a] + n > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', bal[a]) end
  bal[a] = bal[a] + n
  move(a, 'cp', 'avail', n, amt)
end
function OPS.debit(a, amt)
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  asset(a)
  if bal[a] < n then return 'INSUFFICIENT_FUNDS', fmt('%d', bal[a]) end
  bal[a] = bal[a] - n
  move(a, 'avail', 'cp', n, amt)
end
function OPS.freeze(a, amt, h, _, ms)
  local v, code = hold_for_reserve(h, ms)
  if not v then return code end
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  asset(a)
  if bal[a] < n then return 'INSUFFICIENT_FUNDS', fmt('%d', bal[a]) end
  if frz[a] + n > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', frz[a]) end
  bal[a], frz[a] = bal[a] - n, frz[a] + n
  v.legs[a] = (v.legs[a] or 0) + n
  move(a, 'avail', 'frozen', n, amt)
end
function OPS.freeze_points(_, amt, h, _, ms)
  local v, code = hold_for_reserve(h, ms)
  if not v then return code end
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  points()
  if pa < n then return 'INSUFFICIENT_POINTS', fmt('%d', pa) end
  if pf + n > MAX then return 'OVERFLOW', 'points:' .. fmt('%d', pf) end
  pa, pf = pa - n, pf + n
  v.legs.points = (v.legs.points or 0) + n
  move('points', 'avail', 'frozen', n, amt)
end
function OPS.earn_points(_, amt)
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  points()
  if pa + n > MAX then return 'OVERFLOW', 'points:' .. fmt('%d', pa) end
  pa = pa + n
  move('points', 'cp', 'avail', n, amt)
end
function OPS.spend_points(_, amt)
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  points()
  if pa < n then return 'INSUFFICIENT_POINTS', fmt('%d', pa) end
  pa = pa - n
  move('points', 'avail', 'cp', n, amt)
end
function OPS.lock_coupon(_, _, h, c, ms)
  local v, code = hold_for_reserve(h, ms)
  if not v then return code end
  local cv = coupon(c)
  local detail
  code, detail = usable(cv)
  if code then return code, detail end
  set_coupon(c, 'held:' .. h, cv.exp)
  v.cpns[#v.cpns + 1] = c
end
function OPS.grant_coupon(_, _, _, c, ms)
  if coupon(c) then return 'COUPON_EXISTS' end
  set_coupon(c, 'available', ms)
end
function OPS.redeem_coupon(_, _, _, c)
  local cv = coupon(c)
  local code, detail = usable(cv)
  if code then return code, detail end
  set_coupon(c, 'used', cv.exp)
end
function OPS.settle(a, amt, h, _, ms) return unhold(h, a, amt, 'cp', ms) end
function OPS.release(a, amt, h, _, ms) return unhold(h, a, amt, 'avail', ms) end
-- take: n of leg from hold h (checked as a settle would be) into hold dst, which this
-- instruction creates; the funds stay frozen. h stays open even when emptied: an abort gives
-- back into it, a commit closes it.
function OPS.take(leg, amt, h, dst)
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
-- give: n of leg from hold h back into hold origin if it is still open, else to available.
function OPS.give(leg, amt, h, origin)
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
function OPS.close(_, _, h)
  local v = hold(h)
  if v.open then close_if_empty(v) end
end

-- "<byte length>:" of a digest term longer than LENS knows.
local function len(s) return fmt('%d:', #s) end

-- keep_result (the JSON door's) keeps the whole result in the idempotency record, so that a
-- replay answers byte for byte what the first call did; the engine's own calls keep the short
-- form, which it reads back with the request in hand.
local function apply(keys, argv, keep_result)
  -- stage: idempotency GET
  if not fmt then bind() end
  local K_TX, K_OUT, K_EXP = keys[2], keys[3], keys[4]
  K = keys[1]
  local holder, id, fp, idem_ttl, cp, memo, xfer = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7]
  local fpk = sub(fp, 1, 16)

  -- Idempotency: the same id always gets the same outcome.
  local rec = call('GET', K_TX)
  if rec then
    if sub(rec, 1, 16) ~= fpk then return {0, 'err\nIDEMPOTENCY_CONFLICT\n-1\n'} end
    if byte(rec, 33) == 10 and byte(rec, 20) ~= 10 then
      -- Written by key format 1 ("<fp>\n<outcome>"), before an upgrade; gone within the TTL.
      if sub(rec, 1, 32) ~= fp then return {0, 'err\nIDEMPOTENCY_CONFLICT\n-1\n'} end
      return {1, sub(rec, 34)}
    end
    if byte(rec, 17) == 101 then return {1, sub(rec, 17)} end -- 101: "e", a rejection
    return {1, 'ok\n' .. sub(rec, 17)}
  end

  -- stage: argument checks, TIME, field list, one HMGET
  local nargs = #argv
  local nops = (nargs - 7) / 6
  -- The ttl is nearly always the one of the call before (Lua strings are interned: == compares
  -- pointers), which spares its pattern match.
  if nops < 1 or nops > 64 or nops ~= floor(nops) or #fp < 16 or (idem_ttl ~= ttl_ok and
      (#idem_ttl > 15 or not find(idem_ttl, '^%d+$') or tonumber(idem_ttl) < 1)) then
    return {0, 'err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments'}
  end
  ttl_ok = idem_ttl

  local t = call('TIME')
  -- now and ts without a tonumber per call (each is a strtod, dearer than a redis.call's share):
  -- the seconds change once a second, and the milliseconds are the microseconds' text but its
  -- last three digits (TIME writes them without leading zeros).
  local sec, us = t[1], t[2]
  if sec ~= sec_text then sec_text, sec_ms = sec, tonumber(sec) * 1000 end
  local m = #us > 3 and sub(us, 1, #us - 3) or '0'
  now = sec_ms + MSN[m]
  ts = sec .. MS3[MSN[m]]

  for j = 4, nn do fields[fields[j]] = nil end
  nn = 3
  -- The op arguments go into the event's and the result's JSON as they are: none may need
  -- escaping. (The engine sends only ids, asset codes and digits; this keeps a direct caller
  -- from writing an event the ledger could not read, or a hold that reads back as another:
  -- SAFE. The op is a key of NAMES or OPS, the ms digits, or the op is refused.) They are
  -- checked together, with one search: a search costs several times what the concatenation does.
  local text = ''
  for b = 8, nargs, 6 do
    local a, amt, h, c = argv[b + 1], argv[b + 2], argv[b + 3], argv[b + 4]
    text = text .. a .. amt .. h .. c
    local f = NAMES[argv[b]]
    if f then f(a, h, c) end
  end
  if not find(text, SAFE) then
    return {0, 'err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments'}
  end
  raw = call('HMGET', K, unpk(fields, 1, nn))
  -- stage: op loop: checks, event ops JSON
  status = raw[1] or nil
  local existed, status0 = status ~= nil, status
  local seq = raw[2] or '0'
  local digest = raw[3] or ''

  for j = 1, na do
    local a = assets[j]
    bal[a], bal0[a], frz[a], frz0[a], bs0[a], fs0[a] = nil, nil, nil, nil, nil, nil
  end
  na = 0
  pa, pf, pa0, pf0 = nil, nil, nil, nil
  cpn, cpn_dirty, cpn_order = nil, nil, nil
  hld, hld_order = nil, nil
  ne, nmv, incoming = 0, 0, nil

  for i = 0, nops - 1 do
    local b = 8 + i * 6
    local op, a, amt, h, c, ms = argv[b], argv[b + 1], argv[b + 2], argv[b + 3], argv[b + 4], argv[b + 5]
    ne = ne + 1
    -- One concatenation: an absent field adds empty strings, where a nested one would make a
    -- string of its own.
    local nu, nm = amt ~= '0', ms ~= '0'
    ev[ne] = (i == 0 and '[{"op":"' or ',{"op":"') .. op ..
      (a ~= '' and '","asset":"' or '') .. a .. (nu and '","units":"' or '') .. (nu and amt or '') ..
      (h ~= '' and '","hold":"' or '') .. h ..
      (c ~= '' and ((op == 'take' or op == 'give') and '","to":"' or '","coupon":"') or '') .. c ..
      (nm and '","ms":"' or '') .. (nm and ms or '') .. '"'
    nmv = 0
    local code, detail
    if not status and op ~= 'open' then code = 'HOLDER_NOT_FOUND'
    elseif status == 'suspended' and TAKES_OUT[op] then code = 'HOLDER_SUSPENDED'
    else
      local f = OPS[op]
      -- Most ops have no ms: "0" skips the pattern and tonumber.
      if ms == '0' then ms = 0
      elseif #ms <= 16 and find(ms, '^%d+$') then ms = tonumber(ms)
      else f = nil end
      if f then code, detail = f(a, amt, h, c, ms) else code = 'INVALID_INSTRUCTION' end
    end
    if code then
      -- A rejection is recorded under its id, unless the holder does not exist: nothing is
      -- ever written for an unknown holder. Nor is the sweeper's: its id is derived from the
      -- hold, so a refusal recorded under it (OVERFLOW until the holder makes room) would
      -- answer every later pass for the record's whole life instead of releasing.
      local out = 'err\n' .. code .. '\n' .. fmt('%d', i) .. '\n' .. (detail or '')
      if existed and sub(id, 1, 6) ~= 'sweep-' then call('SET', K_TX, fpk .. out, 'PX', idem_ttl) end
      return {0, out}
    end
    ne = ne + 1
    ev[ne] = nmv > 0 and ']}' or '}'
  end
  ne = ne + 1
  ev[ne] = ']'

  -- stage: result JSON and the write lists
  -- Every check passed. Build the result and the writes (still reading), then write.
  -- seq + 1 on its text: the last digit's successor unless it is a 9 (a tonumber and a
  -- string.format cost several times more).
  local last = byte(seq, -1)
  local sseq = last < 57 and sub(seq, 1, -2) .. DIGIT[last - 47] or fmt('%d', tonumber(seq) + 1)
  HS[1], HS[2], HS[3], HS[4], hn = 'HSET', K, 'seq', sseq, 4
  local hdel, zadd, zrem -- made when needed
  RB[1], RB[2], RB[3], RB[4], RB[5], rn = '{"s":"', sseq, '","st":"', status, '","b":{', 5
  KB[1], KB[2], kn = fpk, sseq, 2
  for j = 1, na do
    local a = assets[j]
    local bs = bal[a] == bal0[a] and bs0[a] or fmt('%d', bal[a])
    local fs = frz[a] == frz0[a] and fs0[a] or fmt('%d', frz[a])
    rn = rn + 1; RB[rn] = (j > 1 and ',"' or '"') .. a .. '":["' .. bs .. '","' .. fs .. '"]'
    kn = kn + 1; KB[kn] = ' b' .. a .. '/' .. bs .. '/' .. fs
    if bal[a] ~= bal0[a] then hn = hn + 1; HS[hn] = 'b:' .. a; hn = hn + 1; HS[hn] = bs end
    if frz[a] > 0 then
      if frz[a] ~= frz0[a] then hn = hn + 1; HS[hn] = 'f:' .. a; hn = hn + 1; HS[hn] = fs end
    elseif frz0[a] > 0 then
      hdel = hdel or {'HDEL', K}
      hdel[#hdel + 1] = 'f:' .. a
    end
  end
  rn = rn + 1; RB[rn] = '},"c":{'
  local sep = ''
  for _, c in ipairs(cpn_order or NONE) do
    local v = cpn[c]
    if v then
      local s = v.exp > 0 and (v.st .. '|' .. fmt('%d', v.exp)) or v.st
      rn = rn + 1; RB[rn] = sep .. '"' .. c .. '":"' .. s .. '"'
      kn = kn + 1; KB[kn] = ' c' .. c .. '/' .. s
      sep = ','
      if cpn_dirty[c] then hn = hn + 1; HS[hn] = 'c:' .. c; hn = hn + 1; HS[hn] = s end
    end
  end
  rn = rn + 1; RB[rn] = '},"h":{'
  sep = ''
  for _, h in ipairs(hld_order or NONE) do
    local v = hld[h]
    if v.open then
      local s = encode_hold(v)
      rn = rn + 1; RB[rn] = sep .. '"' .. h .. '":"' .. s .. '"'
      kn = kn + 1; KB[kn] = ' h' .. h .. '/' .. s
      sep = ','
      hn = hn + 1; HS[hn] = 'h:' .. h; hn = hn + 1; HS[hn] = s
    elseif v.was_exp then
      hdel = hdel or {'HDEL', K}
      hdel[#hdel + 1] = 'h:' .. h
    end
    local exp = v.open and v.exp or 0
    if exp > 0 and exp ~= v.was_exp then
      zadd = zadd or {'ZADD', K_EXP}
      zadd[#zadd + 1] = fmt('%d', exp); zadd[#zadd + 1] = holder .. ' ' .. h
    elseif exp == 0 and (v.was_exp or 0) > 0 then
      zrem = zrem or {'ZREM', K_EXP}
      zrem[#zrem + 1] = holder .. ' ' .. h
    end
  end
  rn = rn + 1; RB[rn] = '}'
  if pa ~= nil then
    local as, fs = fmt('%d', pa), fmt('%d', pf)
    rn = rn + 1; RB[rn] = ',"p":["' .. as .. '","' .. fs .. '"]'
    kn = kn + 1; KB[kn] = ' p' .. as .. '/' .. fs
    if pa ~= pa0 or pf ~= pf0 then hn = hn + 1; HS[hn] = 'p:a'; hn = hn + 1; HS[hn] = as end
    if pf > 0 then
      if pf ~= pf0 then hn = hn + 1; HS[hn] = 'p:f'; hn = hn + 1; HS[hn] = fs end
    elseif pf0 > 0 then
      hdel = hdel or {'HDEL', K}
      hdel[#hdel + 1] = 'p:f'
    end
  end
  rn = rn + 1; RB[rn] = '}'
  -- stage: digest (sha1hex of the event)
  local result = concat(RB, '', 1, rn)
  local ops_json = concat(ev, '', 1, ne)
  -- One concatenation, so one string is made.
  digest = sha1hex((LENS[#digest] or len(digest)) .. digest .. (LENS[#holder] or len(holder)) .. holder ..
    (LENS[#sseq] or len(sseq)) .. sseq .. (LENS[#id] or len(id)) .. id .. (LENS[#fp] or len(fp)) .. fp ..
    (LENS[#ts] or len(ts)) .. ts .. (LENS[#cp] or len(cp)) .. cp .. (LENS[#ops_json] or len(ops_json)) .. ops_json ..
    (LENS[#result] or len(result)) .. result .. (LENS[#memo] or len(memo)) .. memo .. (LENS[#xfer] or len(xfer)) .. xfer)
  hn = hn + 1; HS[hn] = 'digest'; hn = hn + 1; HS[hn] = digest
  if status ~= status0 then hn = hn + 1; HS[hn] = 'status'; hn = hn + 1; HS[hn] = status end
  if not existed then hn = hn + 1; HS[hn] = 'created_ms'; hn = hn + 1; HS[hn] = ts end

  if hn > MAX_WRITE_ARGS or (hdel and #hdel > MAX_WRITE_ARGS) then
    local out = 'err\nINVALID_INSTRUCTION\n-1\nthe instruction changes more accounts than one call can write: split it'
    call('SET', K_TX, fpk .. out, 'PX', idem_ttl)
    return {0, out}
  end

  -- stage: expiry index type check, XADD of the event
  -- The expiry index is written only here: a key of another type there must fail now, before
  -- the first write.
  if zadd or zrem then call('ZCARD', K_EXP) end

  -- Writes: the XADD first (a key of another type fails it before anything is written), sets,
  -- then deletes.
  if xfer ~= '' then
    call('XADD', K_OUT, '*', 'holder', holder, 'seq', sseq, 'id', id, 'fp', fp, 'ts', ts, 'cp', cp,
      'ops', ops_json, 'state', result, 'digest', digest, 'memo', memo, 'dv', '2', 'xfer', xfer)
  else
    call('XADD', K_OUT, '*', 'holder', holder, 'seq', sseq, 'id', id, 'fp', fp, 'ts', ts, 'cp', cp,
      'ops', ops_json, 'state', result, 'digest', digest, 'memo', memo, 'dv', '2')
  end
  -- stage: ZADD, HSET, SET of the idempotency record, HDEL, reply
  if zadd then call(unpk(zadd)) end
  call(unpk(HS, 1, hn))
  call('SET', K_TX, keep_result and fpk .. result or concat(KB, '', 1, kn), 'PX', idem_ttl)
  if hdel then call(unpk(hdel)) end
  if zrem then call(unpk(zrem)) end
  return {0, 'ok\n' .. result}
end

-- The transfer function's reply, from the record's fields r.
local function record_reply(outcome, r)
  return {outcome, r[1] or '', r[3] or '', r[4] or '', r[5] or '', r[6] or '', r[7] or '', r[8] or '',
    r[9] or '', r[10] or '', r[11] or ''}
end

local function ms_arg(s)
  if not s or not find(s, '^%d+$') or #s > 15 then error('bad ms argument') end
  return tonumber(s)
end

-- finished_with gives record r's finished string with the parts of finish's arguments at
-- argv[i] (ttl (ms), the number of parts, part indexes) marked, and the ttl; or nil and an error.
local function finished_with(r, argv, i)
  local ttl = ms_arg(argv[i])
  local f = r[8] or string.rep('0', ms_arg(argv[i + 1]))
  for j = i + 2, #argv do
    local k = ms_arg(argv[j])
    if k >= #f then return nil, 'ERR bad part argument' end
    f = sub(f, 1, k) .. '1' .. sub(f, k + 2)
  end
  return f, ttl
end

local function transfer(keys, argv)
  if not fmt then bind() end
  local K_REC, K_IDX = keys[1], keys[2]
  local action, id = argv[1], argv[2]
  local t = call('TIME')
  local tnow = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
  local r = call('HMGET', K_REC, 'status', 'fp', 'err', 'done', 'created_ms', 'deadline_ms', 'holders',
    'finished', 'payer', 'until_ms', 'ttl_ms')

  if action == 'begin' then
    local fp, body, timeout, holders = argv[3], argv[4], ms_arg(argv[5]), argv[6]
    if r[1] then
      if r[2] ~= fp then return record_reply('conflict', r) end
      return record_reply('found', r)
    end
    local deadline, created = fmt('%d', tnow + timeout), fmt('%d', tnow)
    local payer, until_ms, ttl = argv[7] or '', '', argv[9] or ''
    -- checked before the first write
    if payer ~= '' then
      ms_arg(payer)
      until_ms = fmt('%d', tnow + ms_arg(argv[8]))
    end
    if ttl ~= '' and ms_arg(ttl) < 1 then error('bad ms argument') end
    call('ZADD', K_IDX, deadline, id)
    call('HSET', K_REC, 'status', 'preparing', 'fp', fp, 'body', body, 'holders', holders,
      'created_ms', created, 'deadline_ms', deadline, 'payer', payer, 'until_ms', until_ms, 'ttl_ms', ttl)
    return record_reply('new', {'preparing', fp, false, false, created, deadline, holders, false, payer, until_ms,
      ttl})
  end

  if not r[1] then return record_reply('missing', r) end

  if action == 'read' then
    return record_reply('found', r)
  elseif action == 'decide' or action == 'finish' then
    -- Every check before the first write; then the record in one HSET, the index once.
    local fields, due, fin = {}, nil, 3
    if action == 'decide' then
      local to, err, retry = argv[3], argv[4], ms_arg(argv[5])
      if to ~= 'committed' and to ~= 'aborted' then return redis.error_reply('ERR bad status argument') end
      if r[1] == 'preparing' then
        fields = {'status', to, 'err', err, 'decided_ms', fmt('%d', tnow)}
        due = fmt('%d', tnow + retry)
        r[1], r[3] = to, err
      end
      fin = argv[6] and r[1] == to and 6 -- another decision stands: it finishes nothing here
    elseif r[1] == 'preparing' then
      return redis.error_reply('ERR an undecided transfer has no part to finish')
    end
    local ttl
    if fin and not r[4] then
      local f, e = finished_with(r, argv, fin)
      if not f then return redis.error_reply(e) end
      ttl, r[8] = e, f
      fields[#fields + 1], fields[#fields + 2] = 'finished', f
      if not find(f, '0', 1, true) then
        fields[#fields + 1], fields[#fields + 2], fields[#fields + 3], fields[#fields + 4] = 'done', '1', 'done_ms', fmt('%d', tnow)
        r[4] = '1'
      end
    end
    if #fields > 0 then call('HSET', K_REC, unpk(fields)) end
    if ttl and r[4] then
      call('PEXPIRE', K_REC, fmt('%d', ttl))
      call('ZREM', K_IDX, id)
    elseif due then
      call('ZADD', K_IDX, due, id)
    end
    return record_reply('found', r)
  end
  return redis.error_reply('ERR unknown action')
end

-- The JSON door: apply_json decodes one JSON instruction, checks what the Go engine checks before
-- Redis, and hands apply the same flat arguments the engine would send, so the same handlers,
-- checks, idempotency, event and digest follow. Nothing is written when a check here fails.

-- The fields each client op takes: true required, false optional (instructions.Ops says the same;
-- the engine's own ops, check, take, give and close, are not here: clients are refused them).
local JSON_OPS = {
  open = {}, suspend = {}, resume = {},
  credit = {asset = true, amount = true},
  debit = {asset = true, amount = true},
  freeze = {asset = true, amount = true, hold = true, ttl_ms = false},
  freeze_points = {amount = true, hold = true, ttl_ms = false},
  lock_coupon = {coupon = true, hold = true, ttl_ms = false},
  settle = {hold = true, leg = false, amount = false},
  release = {hold = true, leg = false, amount = false},
  earn_points = {amount = true},
  spend_points = {amount = true},
  grant_coupon = {coupon = true, expires_ms = false},
  redeem_coupon = {coupon = true},
}
-- Every field an op may have, in the order the engine checks their presence.
local JSON_FIELDS = {'asset', 'amount', 'hold', 'leg', 'coupon', 'ttl_ms', 'expires_ms'}
local JSON_OP_KEYS = {op = true, asset = true, amount = true, hold = true, leg = true, coupon = true,
  ttl_ms = true, expires_ms = true}
local JSON_TEXT_FIELDS = {'id', 'holder', 'counterparty', 'memo'}
local JSON_TOP = {id = true, holder = true, counterparty = true, memo = true, ops = true}
local MAX_TTL = 315360000000 -- ten years in ms, instructions.MaxTTLMs
local DEFAULT_IDEM_TTL = '86400000' -- 24 h, the engine's default

local function bad(code, i, msg)
  return {0, 'err\n' .. code .. '\n' .. fmt('%d', i) .. '\n' .. msg}
end

local function valid_id(s)
  return type(s) == 'string' and #s >= 1 and #s <= 64 and find(s, '^[%w_.:-]+$') ~= nil
    and find(s, '^%.+$') == nil
end

-- valid_memo: at most 256 bytes of UTF-8 (no overlong forms, surrogates or values past U+10FFFF),
-- no control characters.
local function valid_memo(s)
  if #s > 256 or find(s, '%c') then return false end
  local i, n = 1, #s
  while i <= n do
    local c = byte(s, i)
    local len, lo, hi = 1, 128, 191
    if c < 128 then len = 1
    elseif c >= 194 and c <= 223 then len = 2
    elseif c >= 224 and c <= 239 then
      len = 3
      if c == 224 then lo = 160 elseif c == 237 then hi = 159 end
    elseif c >= 240 and c <= 244 then
      len = 4
      if c == 240 then lo = 144 elseif c == 244 then hi = 143 end
    else return false end
    for j = 1, len - 1 do
      local d = byte(s, i + j)
      if not d or d < (j == 1 and lo or 128) or d > (j == 1 and hi or 191) then return false end
    end
    i = i + len
  end
  return true
end

-- A JSON object decoded by cjson: a table whose keys are all strings (cjson decodes {} and []
-- alike); its number of keys, or false.
local function object(v)
  if type(v) ~= 'table' then return false end
  local n = 0
  for k in pairs(v) do
    if type(k) ~= 'string' then return false end
    n = n + 1
  end
  return n
end

-- The keys written in a JSON text that cjson has accepted: the strings followed by a colon.
-- cjson keeps the last of two equal keys; the engine refuses an instruction whose meaning
-- depends on which one wins, and so does this door, by counting the keys the text has.
local function text_keys(text)
  local n, i = 0, 1
  while true do
    local s = find(text, '"', i, true)
    if not s then return n end
    local j = s + 1
    while true do -- to the string's closing quote, over escapes
      local q = find(text, '["\\]', j)
      if not q then return n end
      if byte(text, q) == 92 then j = q + 2 else j = q; break end
    end
    if find(text, '^%s*:', j + 1) then n = n + 1 end
    i = j + 1
  end
end

-- The keys of every object in v, at any depth (cjson bounds the depth): equal to the keys the
-- text has unless one was given twice. Counted at every depth, so that a value that is an
-- object where a string belongs (an amount) gets the code of that field's check, as in the engine.
local function all_keys(v)
  local n = 0
  for k, x in pairs(v) do
    if type(k) == 'string' then n = n + 1 end
    if type(x) == 'table' then n = n + all_keys(x) end
  end
  return n
end

-- The flat arguments of one op, or nil and the error reply.
local function json_op(o, i, out)
  if not object(o) then return nil, bad('INVALID_INSTRUCTION', i, 'op must be an object') end
  for k in pairs(o) do
    if not JSON_OP_KEYS[k] then
      return nil, bad('INVALID_INSTRUCTION', i, 'unknown field "' .. sub(k, 1, 64) .. '"')
    end
  end
  local op = o.op
  local spec = type(op) == 'string' and JSON_OPS[op]
  if not spec then return nil, bad('INVALID_INSTRUCTION', i, 'unknown op') end
  for _, f in ipairs(JSON_FIELDS) do
    local v = o[f]
    -- As the engine's decoder: a field is left out, never null or empty (an empty leg would read
    -- as the whole hold); a null amount is a value that is not digits, INVALID_AMOUNT below.
    if v == '' or (v == cjson.null and f ~= 'amount') then
      return nil, bad('INVALID_INSTRUCTION', i, 'field "' .. f .. '" is ' .. (v == '' and 'empty' or 'null') .. ': leave it out')
    end
    if spec[f] == true and v == nil then return nil, bad('INVALID_INSTRUCTION', i, op .. ' needs ' .. f) end
    if spec[f] == nil and v ~= nil then return nil, bad('INVALID_INSTRUCTION', i, op .. ' takes no ' .. f) end
    if v ~= nil and f ~= 'amount' and type(v) ~= ((f == 'ttl_ms' or f == 'expires_ms') and 'number' or 'string') then
      return nil, bad('INVALID_INSTRUCTION', i, f .. ' has the wrong type')
    end
  end
  if o.amount and not o.leg and (op == 'settle' or op == 'release') then
    return nil, bad('INVALID_INSTRUCTION', i, op .. ' with an amount needs a leg')
  end
  if o.hold and not valid_id(o.hold) then return nil, bad('INVALID_ID', i, 'hold must match [A-Za-z0-9_.:-]{1,64}') end
  if o.coupon and not valid_id(o.coupon) then return nil, bad('INVALID_ID', i, 'coupon must match [A-Za-z0-9_.:-]{1,64}') end
  if o.hold and sub(o.hold, 1, 2) == 'x:' then
    return nil, bad('INVALID_ID', i, 'hold: names beginning with "x:" are the holds of transfers')
  end
  local a = o.leg or o.asset or ''
  if a ~= '' and not (find(a, '^[A-Z0-9_]+$') and #a <= 16) and not (a == 'points' and o.leg) then
    return nil, bad('UNKNOWN_ASSET', i, 'asset must match [A-Z0-9_]{1,16} (or a leg "points")')
  end
  local amt = '0'
  if o.amount ~= nil then
    -- Leading zeros are taken, as the engine takes them, within its 40 digits.
    local n = type(o.amount) == 'string' and #o.amount <= 40 and units(match(o.amount, '^0*(.*)$'))
    if not n then return nil, bad('INVALID_AMOUNT', i, 'amount must be a string of digits, 1 .. 2^53-1 minor units') end
    amt = fmt('%d', n)
  end
  local ms, lim = o.ttl_ms or o.expires_ms, o.ttl_ms and MAX_TTL or MAX
  if ms ~= nil then
    if ms ~= ms or ms < 1 or ms > lim or ms ~= floor(ms) then
      return nil, bad('INVALID_INSTRUCTION', i, (o.ttl_ms and 'ttl_ms' or 'expires_ms') .. ' must be an integer in 1 .. ' .. fmt('%d', lim))
    end
    ms = fmt('%d', ms)
  end
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5], out[n + 6] =
    op, a, amt, o.hold or '', o.coupon or '', ms or '0'
  return true
end

local function apply_json(keys, argv)
  if not fmt then bind() end
  local text, ttl = argv[1], argv[2] or DEFAULT_IDEM_TTL
  if #keys ~= 4 or not text or #argv > 2 then
    return bad('INVALID_INSTRUCTION', -1, 'FCALL apply_json 4 <holder> <record> <outbox> <expiry> <json> [ttl ms]')
  end
  if #ttl > 15 or not find(ttl, '^%d+$') or tonumber(ttl) < 1 then
    return bad('INVALID_INSTRUCTION', -1, 'the idempotency ttl must be 1 or more ms')
  end
  if #text > 65536 then return bad('INVALID_INSTRUCTION', -1, 'instruction over 64 KiB') end
  local ok, in_ = pcall(cjson.decode, text)
  -- cjson decodes [] as it does {}: the text must open an object.
  if not ok or not object(in_) or not find(text, '^%s*{') then return bad('INVALID_INSTRUCTION', -1, 'not a JSON object') end
  if text_keys(text) ~= all_keys(in_) then return bad('INVALID_INSTRUCTION', -1, 'a key given twice') end
  for k in pairs(in_) do
    if not JSON_TOP[k] then return bad('INVALID_INSTRUCTION', -1, 'unknown field "' .. sub(k, 1, 64) .. '"') end
  end
  -- As the engine reads them: a null id or holder is an empty one (INVALID_ID below); a null
  -- counterparty or memo is refused, as it is left out, never null.
  for _, k in ipairs(JSON_TEXT_FIELDS) do
    local v = in_[k]
    if v == cjson.null and (k == 'counterparty' or k == 'memo') then
      return bad('INVALID_INSTRUCTION', -1, 'field "' .. k .. '" is null: leave it out')
    elseif v == cjson.null then in_[k] = nil
    elseif v ~= nil and type(v) ~= 'string' then return bad('INVALID_INSTRUCTION', -1, k .. ' must be a string') end
  end
  local id, holder, cp, memo, ops = in_.id or '', in_.holder or '', in_.counterparty, in_.memo or '', in_.ops
  if cp == nil then cp = 'external' end -- left out; given, an id like the others ("" refused)
  if not valid_id(id) then return bad('INVALID_ID', -1, 'id must match [A-Za-z0-9_.:-]{1,64}') end
  if not valid_id(holder) then return bad('INVALID_ID', -1, 'holder must match [A-Za-z0-9_.:-]{1,64}') end
  if not valid_id(cp) then return bad('INVALID_ID', -1, 'counterparty must match [A-Za-z0-9_.:-]{1,64}') end
  if not valid_memo(memo) then
    return bad('INVALID_INSTRUCTION', -1, 'memo must be UTF-8 of at most 256 bytes without control characters')
  end
  local nops, count = type(ops) == 'table' and #ops or 0, 0
  if nops > 0 then for _ in pairs(ops) do count = count + 1 end end
  if nops == 0 or count ~= nops then return bad('INVALID_INSTRUCTION', -1, 'ops must be a list of 1 to 64 ops') end
  if nops > 64 then return bad('TOO_MANY_OPS', -1, fmt('%d ops, at most 64', nops)) end
  -- The caller names the keys; these checks catch the likely mistakes, since a wrong key would
  -- apply the instruction to a holder it does not name, or put its event in a stream the relay
  -- never reads. (Whether a slot tag is the one of its slot, only the tag table knows: the
  -- cluster's cross-slot check catches a tag of another slot.)
  local tag = match(keys[3], '^{([0-9a-z]+)}:outbox$')
  -- The record key is the holder's, then 4 characters, then ":<id>": with its length exact, no
  -- other record of the holder (a transfer step's, "…:x:<transfer>:<id>") can pass for it.
  if match(keys[1], '^{h:(.*)}$') ~= holder or sub(keys[2], 1, #keys[1]) ~= keys[1]
      or sub(keys[2], -#id - 1) ~= ':' .. id or #keys[2] ~= #keys[1] + 4 + #id or not tag or #tag > 4 or match(keys[4], '^{([0-9a-z]+)}:expiry$') ~= tag then
    return bad('INVALID_INSTRUCTION', -1, 'KEYS must be the holder hash, idempotency record, outbox and expiry index of the instruction\'s holder and id')
  end
  local flat = {holder, id, sha1hex(text), ttl, cp, memo, ''}
  for i = 1, nops do
    local done, reply = json_op(ops[i], i - 1, flat)
    if not done then return reply end
  end
  -- Ids of the engine's own steps: a client may not take them first.
  if sub(id, 1, 2) == 'x:' then return bad('INVALID_ID', -1, 'id: names beginning with "x:" are those of transfers') end
  if sub(cp, 1, 2) == 'x:' then return bad('INVALID_ID', -1, 'counterparty: names beginning with "x:" are those of transfers') end
  if sub(id, 1, 6) == 'sweep-' then return bad('INVALID_ID', -1, 'id: names beginning with "sweep-" are the sweeper\'s') end
  return apply(keys, flat, true)
end

redis.register_function('apply', apply)
redis.register_function('transfer', transfer)
redis.register_function('apply_json', apply_json)
