#!lua name=atomledger_v2
-- atomledger, key format 2: the Redis Functions library. Its name carries the format version,
-- so that two versions can live side by side during an upgrade.
--
-- FCALL apply 4 <holder hash> <idempotency record> <slot's outbox> <slot's expiry index>
--   (four distinct keys; the engine's door, so their names are not checked: the JSON door's are)
--   SHARED.args_fixed arguments (SHARED is generated, below): holder, instruction id, request
--   fingerprint, idempotency ttl (ms, at least 1, no leading zero: it reaches SET ... PX after the
--   first write), counterparty, memo, transfer id ("" outside a transfer), route (the lane count
--   the engine routed the instruction by, "" when it did not route it by a count); then
--   SHARED.args_per_op per op, 1 to SHARED.max_ops ops: op, asset or leg, units (for open and
--   set_lanes: the lanes), hold, coupon (for take and give: the other hold), ms (ttl_ms of a new
--   hold, a coupon's expires_ms, or the expiry a sweeper's release requires of its hold). Units
--   and ms are decimal digits, "0" when absent, ms at most 2^53-1 (a ttl at most
--   SHARED.max_ttl); credit's, debit's and freeze's asset an asset code ([A-Z0-9_]{1,16}),
--   settle's and release's leg one, "points", or "" (the whole hold: no units then). Else
--   INVALID_INSTRUCTION "malformed function arguments", nothing written or recorded.
--   A route that is not the holder's count (its lanes field, "1" when absent) is refused with the
--   engine's own code LANES_CHANGED, the detail the holder's count: after the replay of a
--   recorded id and after the holder's existence (an unknown holder is HOLDER_NOT_FOUND), before
--   every other check; nothing is recorded or written, so that the engine routes again.
--   Besides the contract's ops, five serve transfers (the engine sends them, clients cannot):
--   check (opens the transfer's hold, empty if nothing else fills it, so that the part's commit
--   or abort has a hold to consume; with units, checks that a credit of them to the asset or
--   leg, added to the call's earlier checks of it, would not pass 2^53-1), take (units of a
--   leg from a hold, checked like a settle, into another hold this instruction creates; the first hold stays open even if
--   emptied, so that give can restore it), give (units of a leg from a hold back into another
--   hold if that one is open, else to available), close (counts the transfer off a hold it
--   took from, and closes that hold if it is empty and no other undecided transfer took from it;
--   with units 1, the part settled the hold whole: what is left in it goes to available and it
--   closes whatever took from it; nothing if the hold is not open) and restore (units of a leg from the
--   counterparty back into a hold while it is open, else to available: what a one-payer
--   transfer's payer settled from it, given back).
--   Reply: {replayed (0 or 1), outcome}, outcome being "ok\n<result json>" ("ok\n" and the
--   idempotency record's short form of it for a replay, below) or
--   "err\n<code>\n<op index>\n<detail>"; the detail is the figure that failed the check, in
--   minor units ("<asset>:<units>" for OVERFLOW, the coupon's state for COUPON_UNAVAILABLE).
--
-- FCALL apply_json 4 <holder hash> <idempotency record> <slot's outbox> <slot's expiry index>
--   <instruction json> [idempotency ttl (ms), default SHARED.default_idem_ttl, no leading zero]
--   The JSON door, for clients in any language (docs/json-door.md): KEYS exactly the contract's
--   for the instruction's holder and id and the holder's slot (its tag from SLOT_TAGS, below),
--   the text JSON's own grammar (cjson's laxer numbers refused); the contract's instruction
--   {"id","holder","counterparty"?,"memo"?,"ops":[...]} with every amount in minor units as a
--   string of digits (a JSON number is INVALID_AMOUNT: cjson would make it an inexact double),
--   ttl_ms and expires_ms JSON integers. It checks what the engine checks before Redis (codes
--   INVALID_INSTRUCTION, INVALID_ID, INVALID_AMOUNT, TOO_MANY_OPS; UNKNOWN_ASSET only for an
--   asset code of the wrong form, as the asset registry lives in the engine), writing nothing
--   when a check fails, then runs apply with the fingerprint sha1hex(json text). Same reply.
--
-- FCALL transfer 2 <transfer record> <slot's index of unfinished transfers>
--   (exactly {x:<transfer id>} and the index of its slot, the id a transfer id: [A-Za-z0-9_.:-],
--   1 to MAX_TRANSFER_ID characters, not dots alone; counts, indexes and ms as Redis writes
--   integers; the action and its arguments are checked whether the record exists or not)
--   action, transfer id, then per action:
--   begin  fp, body, prepare timeout (ms), the parts' holders (comma-separated, MIN_PARTS to
--          MAX_PARTS of them), then for a transfer with one payer (docs/transfers.md) the
--          payer's part index (one of the parts) and how long
--          (ms) its steps may be sent again (their idempotency records' life), both "" for the
--          two phases, then the idempotency ttl (ms) every driver gives the steps' records, the
--          fences and the done record (optional): creates the record "preparing", due for
--          recovery at the deadline; or finds it (another fp: conflict).
--   decide status ("committed" or "aborted"), error, retry (ms): the commit point. Only a
--          "preparing" record changes; one that has been decided keeps its decision. Then
--          finish's arguments, if any follow: those parts finished in the same run, when the
--          decision that stands is this one (a one-payer transfer's last step).
--   finish ttl (ms), the number of parts (the record's), then part indexes (from 0): those
--          parts' commit (or abort) applied, now or before; a finished part is never sent
--          again. Once every part is finished, the record is done: it leaves the index and
--          expires. Refused while preparing.
--   read   nothing: the record as it is.
--   Reply: {outcome, status, error, done, created ms, deadline ms, holders, finished, payer,
--   resend until ms, ttl ms}, outcome being "new", "found", "conflict" or "missing"; finished has
--   one character per part, "1" for a finished part, "0" for another ("" for none yet); payer and
--   resend until "" for a two-phase transfer, ttl "" for a record begun without it. Record
--   fields: status, fp, body, holders, created_ms, deadline_ms, err, decided_ms, finished, done
--   ("1"), done_ms, payer, until_ms, ttl_ms. A one-payer transfer's record begun by the engine
--   (its claim) holds the fields from fp to ttl_ms and the body in one field instead, claim
--   (XFER_CLAIM_FIELDS), and has no status while preparing: a field of the record's own is read
--   before the claim's.
--
-- The holder hash: status, seq, digest, created_ms; b:<asset> and f:<asset> available and frozen
-- minor units; p:a and p:f points; c:<coupon> "<state>" or "<state>|<expires ms>"; h:<hold>
-- "<expires ms or 0>|<leg>=<units>,...|<coupon>,...", then "|<takes>" while transfers that took
-- from it at prepare are undecided (take counts, give and close count down; a hold stays open
-- while any is); a hot holder's lanes (its lane count, on
-- every lane; absent: one) and, on lane 0, lanes_hist, the counts it had within the
-- idempotency window, "<count>@<ms the count ended>;" per raise (open with lanes writes lanes,
-- set_lanes raises it and keeps the count it ends in lanes_hist). A frozen field at zero and a closed hold
-- are deleted; status and seq never are, so the hash never vanishes under a call.
-- The idempotency record: the first SHARED.record_fp characters of the fingerprint, then, for an
-- applied instruction, what its answer needs of the result, short: "<seq>" and for each touched
-- account " b<asset>/<available>/<frozen>", " c<coupon>/<state>", " h<hold>/<hold>",
-- " p<available>/<frozen>", in the result's order; for a rejection
-- "err\n<code>\n<op index>\n<detail>" (none for the sweeper's release, whose id begins with
-- SHARED.sweep_prefix, which tries again on its next pass). A replay answers "ok\n" and that
-- short form.
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

-- BEGIN generated by go generate ./lua (internal/luagen): do not edit
-- The contract's key names (cluster/keys.go): a holder's record is its hash's name, ":tx:" and
-- the id; a slot's keys are its tag in braces and a suffix.
local KEY_TX, KEY_OUTBOX, KEY_EXPIRY, KEY_TRANSFERS = ":tx:", ":outbox", ":expiry", ":transfers"
-- The fewest and most parts a transfer has, the longest transfer id (instructions.MinParts,
-- MaxParts, MaxTransferID).
local MIN_PARTS, MAX_PARTS, MAX_TRANSFER_ID = 2, 16, 60
-- A one-payer transfer's claim, one field of its record (stored.XferClaim): the fields it holds,
-- in its order, each followed by a newline but the last (stored.XferClaimFields).
local XFER_CLAIM = "claim"
local XFER_CLAIM_FIELDS = {"fp", "holders", "created_ms", "deadline_ms", "payer", "until_ms", "ttl_ms",
  "body"}
-- The fields each client op takes: true required, false optional (instructions.Ops). The
-- engine's own ops (check, take, give, close, restore) are not here: clients are refused them.
local JSON_OPS = {
  open = {lanes = false},
  credit = {asset = true, amount = true},
  debit = {asset = true, amount = true},
  freeze = {asset = true, amount = true, hold = true, ttl_ms = false},
  freeze_points = {amount = true, hold = true, ttl_ms = false},
  lock_coupon = {hold = true, coupon = true, ttl_ms = false},
  settle = {hold = true, amount = false, leg = false},
  release = {hold = true, amount = false, leg = false},
  earn_points = {amount = true},
  spend_points = {amount = true},
  grant_coupon = {coupon = true, expires_ms = false},
  redeem_coupon = {coupon = true},
  suspend = {},
  resume = {},
  set_lanes = {lanes = true},
}
-- The ops a suspended holder is refused: those that take value out, and set_lanes
-- (OpSpec.RefusedWhenSuspended).
local REFUSED_SUSPENDED = {debit = true, freeze = true, freeze_points = true, lock_coupon = true,
  spend_points = true, redeem_coupon = true, set_lanes = true}
-- The keys of an op and of an instruction (instructions.Op, instructions.Instruction), an op's
-- fields in the order the engine checks their presence, those that are whole numbers (cjson
-- reads them as doubles: scan sees how they are written), an instruction's fields that are text.
local JSON_OP_KEYS = {op = true, asset = true, amount = true, hold = true, leg = true,
  coupon = true, ttl_ms = true, expires_ms = true, lanes = true}
local JSON_FIELDS = {"asset", "amount", "hold", "leg", "coupon", "ttl_ms", "expires_ms", "lanes"}
local WHOLE_KEYS = {ttl_ms = true, expires_ms = true, lanes = true}
local JSON_TOP = {id = true, holder = true, counterparty = true, memo = true, ops = true}
local JSON_TEXT_FIELDS = {"id", "holder", "counterparty", "memo"}
-- The Go side's numbers and names, in one table (apply is at Lua's limit of 60 upvalues):
-- apply's arguments (internal/libcall), args_fixed, then args_per_op per op, 1 to max_ops ops
-- (instructions.MaxOps); how many characters of the fingerprint an idempotency record keeps;
-- the longest ttl_ms, memo and instruction text (instructions.MaxTTLMs, MaxMemo, MaxPayload);
-- the fewest and most lanes of a hot holder (instructions.MinLanes, MaxLanes);
-- the counterparty of an instruction that names none (DefaultCounterparty); the idempotency ttl
-- (ms) of a call that gives none (libcall.DefaultTTL); the prefixes of the names the engine
-- makes for itself (instructions/reserved.go): the holds, counterparty and ids of transfers,
-- the ids of the sweeper's releases.
local SHARED = {args_fixed = 8, args_per_op = 6, max_ops = 64, record_fp = 16,
  max_ttl = 315360000000, max_memo = 256, min_lanes = 2, max_lanes = 64, max_payload = 65536,
  default_counterparty = "external", default_idem_ttl = "86400000", transfer_prefix = "x:",
  sweep_prefix = "sweep-"}
-- cluster.SlotTag of every slot, padded with spaces to 4 characters, 64 slots a line: slot s's tag
-- starts at byte (s // 64) * 257 + (s % 64) * 4 + 1.
local SLOT_TAGS = [[
1bz emj 7lw 6i7 53p 460 3yu g2m fkt ru  hla 4ji j3f 65n 9s3 8vs 04b l2j ct7 bqw 4eh qhh 2ke fdu 2s4 3vt 491 5xy 6f6 7cv ebk 9dc 021 17q 6x4 su4 aik he3 2m6 3hv cv  fzw a52 h9j cj5 bou 0nh 9b0 9m1 0ai jil 6od h6k 40c fuv lw  3gw 2b7 5iz afj 7ru 6w5 18p 0y8 
5n3 4ks fjn 7g  d5i 83a 714 64t 7mm kke 9jx 8o8 3xo g3w 52j ayr avs 5yc o5n 33f ecq 1la kdd 7bl r35 b4e 05x 108 8f  feo 4dr 5a2 4zp h8p bl  355 0or 1j2 kb7 bno c7v 78f m0c 16k ood 3il ahq 5ga yi8 agp 3fm 14  19j 852 77g c8w ban km6 1e3 8ik f0d mm  549 41y 
53t 464 3yq 289 9kf emn 7ls 6i3 j3b 65j 9s7 8vw fkp 6y  hle 4jm 4el hcd 9x  fdq 04f l2n ct3 bqs 6f2 7cr ebo 9dg 278 32x 495 q45 aio he7 2m2 3hr 025 17u 6x0 79x cj1 boq 0nl 9b4 cr  fzs a56 h9n h6o 40g f1z ls  9m5 0am jih ce0 76y 639 18t e7d 3gs 2b3 hj6 afn 
d5m 83e 710 64p 5n7 4kw fjj 7c  3xk g3s 52n ayv 7mi cby 1cd elt ecu 1le cmx 7bh avw 5yg gxz 33b 8b  fek 4dv 5a6 k89 7z9 0qt 1t4 0ov 1j6 kb3 bnk 4zt h8t bh  351 z9  3ih ahu 5ge c7r 78b m0g 16o 19n 856 77c c8s 5hd agt 3fi 10  fth mi  5p5 4uu baj 6nz 1e7 8io 
nbd 6u  hli 4ja j3n 65f 973 82s 1br 0g2 jo7 cco 53x 468 nz5 285 274 32t 499 5xq cln 03bg0h3 1ms 04j 982 c07 b5w ao0 hch 9t  nme 21g n7o aq2 h9b za5 jfe 8gx 9b8 029 17y c6d 79t 4c3 5fs ggn nk6 nd7 gho 5ir 4l2 76u 635 18x 0y0 9m9 0aa jid 6ol h6c 40k f1v 2zn 
7me cbu 1ch 8o0 3xg k6  52b ayz hms ih3 fjf 7o  d5a 83i 7u4 6pt k85 7z5 05p 100 8n  3o7 4dz hbr a2s 5yk d7  33n ecy 1li cmt 7bd csv 78n e9s 16c z5  3id ahy 5gi 4zx h8x bd  3q5 0oz lir 6aw 7d7 7k6 6nv dok 8ic f0l me  541 41q 5hh agx 3fe u4  19b 8q2 77o k1g 
j3j 65b 977 82w fkx 6q  hlm 4je 5wt 4r4 3yy 281 1bv 0g6 jo3 cck clj 7cz 0h7 1mw 270 32p a3m 5xu 4ed hcl 9p  fdy 04n 986 c03 b5s cj9 boy 0nd dat cz  n7k aq6 h9f 4c7 5fw ggj 3hz 0v5 1su 6x8 79p 76q 631 91d 0y4 nd3 ghk 5iv 4l6 h6g 40o f1r 2zj dnu 0ae sbh 6oh 
3xc k2  52f i4n 7ma cbq 1cl 8o4 d5e 83m 718 64x hmw ih7 fjb 7k  8j  3o3 ig6 hbv k81 7z1 05t 104 mje 1lm cmp bh0 a2w 5yo d3  33j z1  fc0 iae 5gm c7z 78j e9w 16g 8ff liv 6as 7d3 iy4 q3t 20y 359 f0h ma  545 41u 7k2 6nr doo 8ig 19f 8q6 77k k1c 5hl ind 3fa 18  
04s 113 k96 b5n 4ey hcq 9m  3n4 e4  32m a3p 5xh clw 7cg 8a2 1mj 1bk 8n3 7lf ccv 53a axy 3yd j5  3a5 6l  5o8 4jx 7t7 6qw d4b 82j 1d8 0ax 7j5 6ou 552 40r f1o lf  3gf t7  5ik ioc 76l k0d 18a 849 e8p 1sh cru 79m aiz 5fj ggw 3hg cg  3p6 ix3 q2s rh4 7e4 0ny 1k9 
a2j 5yr 267 33w 0i0 1lp cmm ja5 c14 b4t 05i 991 8w  nlf 4dc hbk hmj 4kb ncg 7v  960 83p j2m 64e jn4 cbl 1cq 0f1 w46 296 5vs 4s3 5hq 4m1 ne4 gil 90c 0x3 77v 626 jhg 6no dor 8iz f0u g55 hsh 41h 4za h8a 20d n6l 0oc lik 6an jgf c7g 78w 0w2 16z gfm nj5 4b0 5gp 
if5 hcu 9i  3n0 04w 117 k92 b5j cls 7cc 8a6 1mn e0  32i a3t 5xl 53e i5m f78 j1  1bo 8n7 7lb ccr 7t3 6qs d4f 82n 3a1 6h  hlt ii4 556 40v f1k lb  dnl 8hd 7j1 6oq 76h c9x 18e 8p5 3gb t3  5io iog pkn 5fn ggs 3hc e8t 17d c6y 79i kc8 7e0 8ge dam cc  3p2 ix7 q2w 
0i4 1lt 6g9 7by a2n 5yv 263 33s 8s  fez 4dg hbo c10 b4p 05m 995 964 83t j2i 64a hmn 4kf ncc 7r  3xz 292 5vw 4s7 7mx 6h8 1cu 0f5 90g 0x7 77r 622 5hu 4m5 3fx 2c8 f0q mx  h7d 41l jhc 6nk dov ej6 0og lio 6aj bnz 4ze h8e by  n6h 2l9 3iy 4b4 5gt c7c 78s 0w6 1rv 
o4m 32e a3x yy8 keg 7co ebr 1mb 0ps 1u3 r26 b5f 4eq hcy 9e  fdl fkm 6d  5o0 4jp 707 65w 1z2 82b 1bc ems 7ln kjf 53i axq 3yl g2t 3gn 07  5ic afs 76d c9t 18i 841 1d0 0ap jiu kl5 5q2 40z f1g ln  co  346 ps3 h9s kc4 bol 0nq 1k1 e8x 17h c6u 79e air 5fb ong 3ho 
cu4 bpt 05a 999 2jf fev 4dk hbc 482 5yz 2r7 3ww 0i8 1lx 6g5 7bu 7mt 6h4 1cy 0f9 3xv g3n 52s 473 hmb 4kj fjw sv  968 83x j2e 64m baw 6ng 9l2 8ir ftu mt  h7h 4uh 5hy 4m9 3ft 2c4 19s e6c 7sv 6v6 6y7 st7 032 16r 2l5 3iu 4b8 5gx 4zi h8i bu  n6d 0ok 9c3 6af bnv 
kec 7ck ebv 1mf e8  32a awt 5xd 4eu qhu 9a  3n8 0pw 1u7 r22 b5b 703 65s 1z6 82f 3a9 rh  5o4 4jt 53m axu 3yh j9  1bg emw 7lj ccz 7rh c9p 18m 845 3gj 03  5ig afw 5q6 4tv f1c lj  1d4 0at 7j9 6oy kc0 7e8 0nu 1k5 ck  342 ps7 h9w aiv 5ff onc 3hk m1d 17l c6q 79a 
2jb fer 4do hbg c18 b4x 05e l3m ecl 9ed 6g1 7bq 486 hz6 2r3 3ws 3xr g3j 52w 477 7mp 6h0 9je elm 9r4 8wt j2a 64i hmf 4kn fjs 7z  f0y mp  h7l 41d bas 6nc 9l6 8iv 19w e6g 77z 6v2 hk5 agm 3fp 2c0 2l1 3iq ahl hd4 6y3 st3 036 16v 0oo 9c7 6ab bnr 4zm h8m bq  nrh 
dlj 0cz 7h7 6mw 570 42p f3m nd  3ed v5  5ki ady 74n k2f 9ws 8r3 m3j 15b cpw bu7 akx 5dh y4  3je ae  3r4 4yy 581 6bv 7g6 8ec dck 06q 131 rt4 7y4 id3 has 2iv 3l6 g6  30o a1r 5zj cnu 7ae 8c0 1oh 9iq 8l1 7nd cat 51c i7k fq6 h7  3c7 4n  hnr 4hz 7v5 6su 1x8 09p 
5js 4o3 ng6 gkn 92a 0z1 75t 604 jje 6lm 9n8 8kx f2w 2yo h5b 43j 4xc q1k 22f n4n 0ma 9a9 6cl jed c5e s25 018 14x gdo nh7 ajb 5er a0h hx8 245 31u 0k2 1nr coo jc7 69f b6v 07k l1c 2hl nnd 4fa qka hoh ac0 nae 5t  942 08j b9w 66g jl6 kiv 1as 0d3 ny4 g1d 50y 459 
574 42t 399 2xq dln 8jf 7h3 6ms 74j k2b 9ww 8r7 fo0 29  5km ime ibd 5dl y0  3ja m3n 15f cps bu3 6br 7g2 8eg dco aa  368 iz5 585 id7 haw 2ir 3l2 06u 135 68x 7y0 cnq 7aa 8c4 1ol g2  30k a1v 5zn 51g i7o fq2 h3  9iu 8l5 bd0 cap 729 67y d6d 09t 3c3 4j  hnv ik6 
92e 0z5 75p 600 5jw 4o7 3dz gkj f2s oz  h5f 43n bcy 6li dmt 0bd 0me dbu 6ch blx 4xg q1o 22b fyz gdk nh3 ajf 5ev c5a j99 0u4 1pt 0k6 1nv cok jc3 a0l qs4 241 31q 2hh fgx 4fe qke 69b b6r 07o l1g 946 08n b9s 66c hol 4id fhy 5p  3zx guh 5tu 4q5 7oz kir 1aw 0d7 
3el 25  5ka adq 74f k2n 93s 863 1f2 0cr bbo kn7 578 42x 395 nl  am  364 4yq 589 ka6 bmn 0ls 1i3 892 15j c4w b17 akp ye8 ole 3jm o6o 30g a1z 5zb kge 7am 8c8 9fx 06y 139 68t b7d 4gs 5b3 oj6 ffn fio 4f  5m2 4hr 725 67u 1x0 09x 9iy 8l9 7nl khd 51k azs f56 g0v 
bcu 6le 9n0 0bh fvw ov  h5j 43b hi3 aek 3dv 2a6 92i 0z9 7qt 6t4 c5m j95 010 14p 2n7 3kw ajj 5ez 4xk q1c 22n fyv 0mi 9a1 6cd blt 69n brv 07c d8s 2hd fgt 4fi qki ath hx0 2p5 3uu eaj 1nz 6e7 sh7 7ov 6j6 9hc enk 3zt g1l 50q 451 qdh 4ih fhu qt  9p2 08b j0g 66o 
74b k2j 93w 867 3eh 21  5ke adu 5s4 4vt 391 nh  1f6 0cv bbk kn3 6bz bmj 0lw 1i7 ai  360 4yu qtu akt 5dd y8  3ji 896 15n c4s b13 cny 7ai mil 1od o6k 30c auv 5zf 4gw 5b7 2iz ffj 0ru 1w5 68p 7y8 721 67q 1x4 80d fik 4b  5m6 4hv 51o azw f52 g0r dj5 eou 7nh cax 
fvs or  h5n 43f bcq 6la 9n4 0bl 92m e4e 75x 608 hi7 aeo 3dr 2a2 2n3 3ks ajn hf6 c5i j91 014 14t 0mm 9a5 ci0 blp 4xo q1g 22j fyr gb0 fgp 4fm qkm 69j b6z 07g d8w ean 9gf 6e3 sh3 a0d hx4 249 31y 3zp g1h 50u 455 7or 6j2 9hg eno 9p6 08f j0c 66k hod 4il fhq 5x  
003 15s 6z6 j86 4a9 5dy 2o4 3jt at  fxu 4yh qth 6bg bmw 0lj dcz 9o3 0ck bbv 6mf h4i 42a fwt nu  3eu gje 5kx 4n8 7pw 6u7 93j e5b lc0 0e8 7nu 6k5 51r 442 ws7 g0o fiv pw  hnc 4hk j1d 67l 959 09a 3   d9p 68m bsu 4gj hab 2ig ffw 2q6 3tv a1c hy3 6d4 7at 0j9 1oy 
4xr q1z 22w 377 0mp 1h0 02bdblm c5t b04 881 14i omf 3kn ajs 5ec 5jb aer 3do 36  92p 870 75e k3m bcl ko4 1g1 0bq 386 oo  5r3 4ws 5l1 4iq fhl 5e  1y3 81c 736 66v 7oo kig 1ab enr 3zm g1u 50h irh a0y yz9 o7l 31d eas 1nc kff 03aw69w b6g 07z 1v2 ok5 fgm 4fp 5c0 
akm hg5 2o0 3jp 007 15w 6z2 j82 6bc bms 0ln ljf ap  fxq 4yl q0d h4m 42e f3x nq  9o7 0co bbr 6mb 7ps 6u3 93n e5f 3eq gja hh4 adl 51v 446 ws3 g0k 9id eol 7nq 6k1 b8x 67h 9q5 09e fir ps  hng 4ho 4gn haf 2ic ffs 7   d9t 68i b7y 6d0 7ap miu 9fe 2q2 30z a1g hy7 
0mt 1h4 6cy 7f9 4xv quv 22s 373 gdz 3kj ajw 5eg c5p b00 885 14m 92t 874 75a k3i 5jf aev 3dk 32  382 ok  5r7 4ww 7i8 6lx 1g5 0bu 1y7 81g 732 66r 5l5 4iu 3b8 5a  3zi i8  50l i6d 7ok kic 1af env eaw 1ng coz 03asatu 097lf9  3uh 2hy 3m9 4ft 5c4 69s b6c 0sv 1v6 
23e n5m a78 q0h 6bo jdg 0lb dcr 0t3 1qs c4f s36 4a1 5dq gel ni4 nf5 gjm 5kp 4n0 74w 617 93b e5j dls 0cc jkf 6mn h4a 42i f3t 2xl wkn 4w  hnk 4hc b8t 67d 951 09i 9ih 0e0 jm5 cam 51z 4p2 nx7 g0g 256 30v a1k 5zs cnl jb4 0j1 1oq 06h d9x 68e b7u 4gb haj 2io nog 
cqt bt4 889 14a x7  3kf icc 5ek 4xz 592 2vw 3s7 0mx 1h8 6cu 7f5 7i4 6lt 1g9 0by f2n og  563 43s 5jj aez 3dg w6  92x 878 75m k3e 7og kio 1aj 8m2 3ze i4  5th i6h 5l9 4iy 3b4 5m  d7c 08s 7w6 6rv ru7 7x7 07r 122 2hu 3m5 4fx 5c8 a0q yz1 f5  31l 8b3 1nk cov bj6 
6bk jdc 0lf dcv ax  fxy 4yd q0l 4a5 5du 2o8 3jx 0t7 1qw c4b s32 74s 613 93f e5n 3ey gji 5kt 4n4 h4e 42m f3p ny  dlw 0cg bbz 6mj b8p 6sh 955 09m fiz 4s  hno 4hg 5uv 4p6 nx3 g0c 9il 0e4 7ny 6k9 6d8 7ax 0j5 1ou 252 30r a1o 5zw 4gf han 2ik noc 06l l0d 68a b7q 
x3  3kb icg 5eo c5x b08 m2m 14e 8dd dbl 6cq 7f1 p46 596 2vs 3s3 f2j oc  567 43w 7i0 6lp dmm 8ke 9vt 8s4 75i k3a 5jn ilf 3dc w2  3za i0  50d i6l 7oc kik 1an 8m6 d7g 08w 7w2 66z hou ij5 3b0 5i  2hq 3m1 ie4 ybd ru3 7x3 07v 126 8b7 1no cor bj2 a0u yz5 f1  31h 
5nw 4k7 nc2 goj 96e e0m 71p 640 bgy 6hi dit 0fd f6s kz  h1f 47n 48o hzo 26b f9r 0ie dfu 6gh bhx c1a 7zy 0q4 1tt ois nl3 4d6 5av 4z4 h84 201 35q 0o6 1jv ckk jg3 6yj b2r 03o dxw zy  fcx 4be hdm hkl 4md fly 1p  906 0xf j4k 62c 7kz cdj 1ew ejg n98 gqh 5pu 4u5 
dhn 8nf 7l3 6is 534 46t 3y1 28y fk0 69  5om iie 70j k6b 1zo 8v7 8y6 11f cts bq3 ifd ya4 98  3na ea  328 49u q4u 6fr 7c2 8ag dgo 02u 175 6xp 798 00bfhew 2mr 3h2 c2  34k a5v 092gcjq 7ea 8g4 1kl 1dm 8h5 03kycep 55g i3o fu2 l3  3g3 0j  hjv io6 769 63y 184 84l 
96a e0i 71t 644 5ns 4k3 nc6 gon f6w 29g h1b 47j jne 6hm 9j8 8ox 0ia 9e9 6gl jad 48k hzk 26f f9v oiw nl7 4d2 5ar c1e jy5 058 10x 0o2 1jr cko jg7 4z0 h80 205 35u 2ll njd 4ba hdi 6yn b2v 03k dxs 902 0xb j4o 62g hkh ag0 nee 1t  w24 g5d 54y 419 jh6 cdn 1es ejc 
530 46p 3y5 jd  dhj 0gz 7l7 6iw 70n k6f 1zk 8v3 3ad r5  5oi iia aox ya0 gau 3ne 8y2 11b ctw bq7 6fv 7c6 8ac dgk ee  3v4 49q 5x9 00bbhes 2mv 3h6 02q 171 6xt b3l cju 7ee 8g0 1kh c6  34o a5r 092c55c i3k fu6 l7  1di 8h1 7jd cet 7r5 6wu 180 0yx 3g7 0n  hjr 4lz 
bgq 6ha 9j4 0fl frs kr  h1n 47f hm7 aao wh2 2e2 96m e0e 71x 648 c1i 7zq 054 10t 2j3 3os ann hb6 48g hzg ds  f9z 0im 9e5 cm0 bhp 6yb b2z 03g l5o zq  fcp 4bm hde a4d q34 209 35y een 9cf 6a3 7ds 7kr 6n2 9lg ejo n90 g5h 54u 415 hkd 4ml flq 1x  9t6 0xn bys 62k 
3ah 61  5oe iim 70b k6j 1zg 827 1b6 0gv bfk kj3 5w4 4rt 3y9 jh  ei  320 pu5 5x5 6fz bij 0hw 1m7 ezv 11n c0s b53 aot 09he90  3ni o2k 34c aqv 092ocjy 7ei edt 1kd 0vu 1s5 6xx 790 4cw 5f7 2mz fbj fmk 0b  5i6 4lv 761 63q d2l 0yt 1de eku 7jh cex 55o i3g f12 g4r 
frw kv  h1j 47b bgu 6he 9j0 0fh 96i e0a 7ut 6p4 hm3 aak wh6 2e6 2j7 3ow anj 5az c1m 7zu 050 10p 0ii 9e1 6gd bht 48c hzc dw  n0f zu  fct 4bi hda 6yf bvv 03c l5k eej 1jz 6a7 7dw 4z8 h88 2t5 3qu n94 g5l 54q 411 7kv 6n6 9lc ejk 9t2 0xj byw 62o yip 4mh flu ut  
70f k6n 1zc 823 3al 65  5oa iii 538 46x f7e jl  1b2 0gr bfo kj7 ke6 bin 0hs 1m3 em  324 49y 5x1 aop ya8 94  3nm ezr 11j c0w b57 kce 7em 8g8 9bx o2o 34g a5z 092k4cs 5f3 on6 fbn 02y 179 r44 794 765 63u 188 0yp fmo 0f  5i2 4lr 55k i3c f16 g4v 1da 8h9 7jl kld 
pt6 5y6 dj  333 0it 1l4 6gy 7b9 c1p 7zh m6e 10m 83  3oj anw 5ag 5nf aav 07ar72  96t 834 71a czy 7m8 6hx 1c5 0fu f6b kk  5v7 4sw 5h5 4mu 3f8 1a  d3o 0xw 772 62r 7kk kmc 1ef ejv f01 m8  54l i2d apu 093lb9  3qh eew 1jg ckz 7dj kz3 783 0wv 1r6 zh  3i9 4bt 5g4 
047 11w c0j ss2 aom hc5 2k0 3np ep  f8y 49d q4d 6fc bis 0hn 9d6 9k7 0go bfr 6ib h0m 46e f7x jq  3aq 2d1 hl4 iit 7ts 6q3 97n e1f 9md ekl 7jq 6o1 55v 406 n83 2z3 fmr ts  hjg 4lo bxp 63h 9u5 0ym 02d 9z4 6xa b3y 4cn hef 2mc fbs 2u2 34z a5g q27 kcx 7ep edm 9be 
0ip 1l0 kd5 bhm 48z 5y2 dn  337 87  3on ans 5ac c1t 7zl 8x9 10i 96p 830 71e k7m 5nb aar 07av76  f6f ko  5v3 4ss bgl kk4 1c1 0fq d3k 0xs 776 62v 5h1 4mq fll 1e  f05 g5u 54h ivh 7ko kmg 1eb ejr ees 1jc kbf 7dn a4y 093ho3l 35d zl  fcm 4bp 5g0 kz7 787 03z 1r2 
4e9 hc1 2k4 3nt 043 11s c0n ss6 6fg biw 0hj 9d2 et  n1e a30 qph h0i 46a fst ju  9k3 0gk bfv 6if 7tw 6q7 1zz e1b 3au 2d5 5ox 4j8 55r 402 n87 2z7 1dx 0a8 7ju 6o5 bxt 63l 919 0yi fmv tw  hjc 4lk 4cj heb 2mg fbw 0vh 9z0 6xe bwu cjd 7et 0n9 1ky 2u6 3pv a5c q23 
c1x b48 8x5 10e oij 3ob igg 5ao 48v hzv db  3w3 mj4 dfl 6gq 7b1 7m0 6hp dim 8oe 3x2 kc  527 47w 5nn ihf fj3 s2  9rt 8w4 71i czq 7kc cds 1en 8i6 f09 m0  54d i2l hku in5 3f0 1i  197 85o 7s2 62z 6ys b2k 03v 166 2lq 3i1 ia4 hdt a4u 093db1  35h 8f7 1jo ckr 7db 
ex  f8q 49l q4l 6fk skk 0hf dgv 0p7 1uw c0b jx2 4e5 qh5 2k8 3nx 3ay 2d9 5ot 4j4 70s 653 1zv e1n dhw 0gg bfz 6ij h0e 46m f7p jy  fmz 0s  hjo 4lg bxx 6wh 915 0ye 1dt 0a4 7jy 6o9 5qv 4t6 w33 g4c 212 34r a5o h97 cjh 7ex 0n5 1ku 02l dyt 6xi b3q 4cf hen 2mk nkc 
oin 3of igc 5ak cut 7zd 8x1 10a 0ix 1l8 6gu 7b5 48r hzr df  3w7 3x6 kg  523 47s 7m4 6ht 1c9 0fy 96x 838 71m czu 5nj aaz fj7 s6  ft5 m4  5ph i2h 7kg cdw 1ej 8i2 193 85k 7s6 6vv 5h9 4my 3f4 1m  zd  3i5 4bx 5g8 6yw b2o 03r 162 8f3 1jk ckv 7df a4q 09whb5  35l 
6fo sko 0hb dgr 27e f8u 49h q4h 4e1 hc9 gal nm4 0p3 1us c0f jx6 70w 657 1zr e1j nb5 gnm 5op 4j0 h0a 46i f7t 28d dhs 0gc jof 6in j5l 63d 911 0ya ndf 0w  hjk 4lc 55z 4t2 w37 g4g 1dp 0a0 ji5 cem cjl jf4 0n1 1kq 216 34v a5k h93 4cb hej 2mo nkg 02h 9z8 6xm b3u 
5j7 4ow fnj 3c  d1m 0zu 750 60p 7ii cfy 1gd eht 38c g7s 56n i0f arw 59o g8r 37b egu 1he cix 7fh kx1 b0a 0ut 1p4 xj  fak ph6 5e6 i94 qst fh  311 0kv 1n6 kf3 bjk c3r 7xj eyw 12o gbx 3mh alu 5ce 5ld act 3bi 50  1yf 816 73c k5k bej 6jz 1a7 0dw 3z8 ii  5t5 4qu 
9of ein 7hs 6m3 57t 424 39y 2x1 fop 2y  hhe 4nm bzr 61j 9w7 8rw 00f 9x6 6zc bus 4al hgd yp  nii 238 36x a7e 58u 6b2 7gr efo lj7 f   13u 688 7yp amo ha7 2i2 3lr gr  n3c a16 hyf 6da bkq 0jl 9f4 9i5 0em bdp ca0 h2o 44g f5z hs  3cs 2f3 hn6 abn 72y 679 95l 094 
d1i 0zq 754 60t 5j3 4os fnn 3g  38g g7w 56j a9z 7im koe 9nx 8k8 8d9 1ha rkl 7fl ars 59k g8v 37f xn  fao ph2 5e2 kx5 b0e 01x 148 0kr 1n2 kf7 bjo i90 hxx fl  315 okd 3ml alq 5ca c3v 7xn eys 12k 1yb 812 73g k5o ym8 acp 3bm 54  f4d im  509 45y ben ki6 1a3 0ds 
57p 420 wu5 2x5 1fz eij 7hw 6m7 bzv 61n 9w3 8rs fot vu  hha 4ni 4ah qlh yt  nim 00b 9x2 6zg buw 6b6 7gv efk lj3 2w4 3rt 4y9 58q amk ha3 2i6 3lv b   13q c2l 7yt 6de bku 0jh 9f0 gv  n3g a12 hyb h2k 44c fqv hw  9i1 0ei bdt 6kd 7vu 6s5 1xx 090 3cw 2f7 5mz abj 
7ia cfq 1gl 8k4 38k o2  56f a9v hiw il7 3d2 3k  d1e 87m 758 60x kx9 b0i 01t 144 xb  3k3 ic6 hfv a6w 59g g8z 37j 8d5 1hm cip bl0 c3z 7xb 8z7 12g gbp fg0 iee 5cm p24 hxt 24y 319 8bf ddn 6es bjc 7o2 6jr dko 8mg 3z0 ia  505 45u 5ll ijd 3ba 58  1yn 8u6 73k cxs 
fox 2q  hhm 4ne bzz 61b 937 86w 1fv 0c6 jk3 cgk 5st 4v4 39q 2x9 230 36p 4y5 qt5 chj 7gz 0l7 1iw 00n l6f 6zk b1s 4ad hgl yx  nia gz  n3k au6 hyn 6di bky 0jd det n   1wu 680 7yx 4g7 5bw gcj 3lz 07bbglk 5mv 4h6 72q 671 1xt e3l dju 0ee bdx 6kh h2g 44o f5r g02 
38o o6  56b a9r 7ie cfu 1gh 8k0 d1a 0zy 7q4 6tt his il3 3d6 3o  xf  3k7 ic2 hfr rs5 b0m 01p 140 8d1 1hi cit 7fd a6s 59c o1f 37n gbt 3md aly 5ci cwv 7xf 8z3 12c 0kz ddj 6ew bjg i98 hxp fd  3u5 3z4 ie  501 45q 7o6 6jv dkk 8mc 1yj 8u2 73o cxw 5lh acx 3be q4  
j7n 61f 933 86s nfd 2u  hhi 4na 57x 428 39u g6e 1fr 0c2 jk7 cgo chn jd6 0l3 1is 234 36t 4y1 58y ak0 hgh 2om nie 00j l6b 6zo b1w 6dm jbe 8cx 9f8 25g n3o au2 hyj 4g3 5bs gcn no6 j   13y 684 jz4 72u 675 1xp 098 07bfglo 5mr 4h2 h2c 44k f5v g06 9i9 0ea jmd 6kl 
4x6 qu6 223 37s 0m4 1ht 6c9 7fy c50 b0p 01m dzu 2nj faz aj7 hfo hin 4of ngc 3r  924 0zd j6i 60a 7ix 6l8 1gu 0b5 38r g7b 5rw 4w7 5lu 4i5 3bx 2g8 1yw e2o 73r 662 jlc 6jk dkv 0df f4q ix  h3d 45l at5 hxm fy  n2h 0kg ddw 6ej bjz 693 s43 0s6 1vv 2h9 3my 4f4 5ct 
00w 157 6zr b1j ib5 hgu ya  3j0 a0  36i a7t 58d chs 7gc 8e6 1in 1fo 8j7 7hb cgr 57e a8u 39h n1  3e1 2h  hht im4 7p3 6us d0f 86n djl 8ld 7n1 6kq 516 44v f5k hb  3cb p3  5mo ikg 72h cyp 1xm 8t5 w   13d c2y 7ya idf 5bn gcs 3lc gc  3t2 p37 hyw 6dp 7a0 8ce dem 
0m0 1hp cim je5 4x2 59z 227 37w 2nn nhf aj3 hfk c54 b0t 01i 9y9 920 87p j6m 60e hij 4ob ngg 3v  38v g7f 5rs 4w3 jj4 cfl 1gq 0b1 1ys e2k 73v 666 5lq 4i1 na4 gml f4u g15 hwh 45h jlg 6jo dkr 0db 0kc dds 6en jcf a09 hxi 24d n2l gbm nn5 4f0 5cp 697 s47 0s2 12z 
4ay 5d9 ye  3j4 00s 153 6zv b1n chw 7gg 8e2 1ij a4  36m a7p y98 57a a8q 39l n5  1fk 8j3 7hf cgv 7p7 6uw d0b 86j 3e5 2l  5k8 4nx 512 44r f5o hf  djh 0ex 7n5 6ku 72l cyt 1xi 809 3cf p7  5mk ikc amz 5bj gcw 3lg s   1wh cvu 7ye 6dt 7a4 0jy 1o9 gg  3t6 p33 hys 
c58 b0x 01e 9y5 xs  far xa7 hfg a6f 59v 2v3 3ss egl 9ad 6c1 7fq 7ip 6l0 9ne ehm 38z 2y2 56w 437 hif 4on fns 3z  9v4 0zl j6a 60i bes 6jc 9h6 0dn f4y ip  h3l 45d ho5 acm 3bp 2g0 94o 087 73z 6r2 c3k 7xs 076 12v 2h1 3mq all 01bea05 hxe fq  nvh 0ko 9g7 6eb bjr 
a8  36a ast 58l kac 7gk efv 1if 0tw 1q7 6zz b1b 4au 5d5 yi  3j8 3e9 vh  5k4 4nt 743 61s d0n 86f 1fg eiw 7hj cgz 57m i1e f30 n9  3cj 43  5mg abw 7vh cyx 1xe 805 djd 0et 7n9 6ky 5u6 4pv f5c hj  gk  302 i87 5z7 6dx 7a8 0ju 1o5 ext 13l c2q 7yi amv 5bf ojc 3lk 
xw  fav xa3 hfc cq4 btt 01a 9y1 0m8 1hx 6c5 7fu a6b 59r 2v7 3sw wt6 2y6 56s 433 7it 6l4 1gy 0b9 928 0zh j6e 60m hib 4oj fnw wv  fpu it  h3h 4qh bew 6jg 9h2 0dj 94k 083 7wv 6r6 5ly 4i9 3bt 2g4 2h5 3mu 4f8 5cx c3o 7xw 072 12r 0kk 9g3 6ef bjv a01 hxa fu  n2d 
kag 7go efr 1ib g9u 36e a7x 58h 4aq 5d1 ym  nit 0ts 1q3 ky6 b1f 747 61w d0j 86b fom 2d  5k0 4np 57i a8y 39d g6t 1fc eis 7hn knf 72d k4l 1xa 801 3cn 47  5mc abs 5u2 44z f5g hn  lcx 0ep bdm kh5 kg4 bkl 0jq 1o1 go  306 i83 5z3 amr 5bb ojg 3lo exp 13h c2u 7ym 
17p 020 su5 6x5 5fz aij 3hw 2m7 fzv cw  h9k a53 bot cj4 9b1 0ni 0ah 9m0 6oe jim 40b h6j lv  fuw 2b6 3gv afk hj3 6w4 7rt 0y9 18q emk 9kc 6i6 7lv 461 53q g2l 3yt rt  fku 4jh qgh 65o j3g 82z 9s2 l2k 04c bqv ct6 hca 4ei fdt 2kd 3vu 2s5 5xx 490 7cw 6f7 1mz ebj 
h8q 4zq 354 bm  1j3 0os bnn kb6 78g c7w 16j e9z 3im ooe yf8 ahp agq 5ha 15  3fl 853 19k c8v 77f km7 bao 8ij 1e2 ml  f0e 41x 548 4kr 5n2 7f  fjo 8wh d5h 64u 715 kkd 7ml 8o9 1ca g3v 3xn ays 52k 5yb a2z 33g o5o 9ex ecp 7bm kde b4d r34 109 05y fen 8g  5a3 4ds 
he6 ain 3hs 2m3 17t 024 79y 6x1 bop cj0 9b5 0nm fzr cs  h9o a57 40f h6n lr  fus 0al 9m4 6oa jii 638 76x e7e 18u 2b2 3gr afo hj7 465 53u 288 3yp emo 9kg 6i2 7lr 65k j3c 8vv 9s6 6x  fkq 4jl hld hce 4em fdp 9y  l2o 04g b5z ct2 7cs 6f3 9df ebn 32y 279 q44 494 
1j7 0ow bnj 6az h8u 4zu 350 bi  3ii z8  5gd aht 78c c7s 16n m0f 857 19o c8r 77b agu 5he 11  3fh mh  f0a 4ut 5p4 km3 bak 8in 1e6 83d d5l 64q 711 4kv 5n6 7b  fjk g3r 3xj ayw 52o cbx 7mh elu 1ce 1ld ect 7bi cmy 5yf avv 33c o5k fej 8c  5a7 4dw 7z8 k88 1t5 0qu 
n7n 21f h9c aq3 jfd za4 9b9 0na 17x 028 79u c6e 5fr 4c2 nk7 ggo ghn nd6 4l3 5is 634 76t 0y1 18y 8hx 9m8 6om jie 40j h6b 2zo f1w 6t  nbe xk8 hlh 65g j3o 82r 972 0g3 1bs ccn jo6 469 53y 284 nz4 32u 275 5xp 498 03bfclo 1mr 0h2 983 04k b5v c06 hci 4ea nmd 9u  
78o csw 16b e9r 3ie z4  5gh ahx h8y 4zy 3q4 be  lis 8fc 7d6 6av 6nw 7k7 8ib doj md  f0m 41p 540 agy 5hi u5  3fd 8q3 19c k1f 77n cbt 7md 8o1 1ci k7  3xf i4k 52c 4kz hmr 7n  fjg 83h dqh 6pu 7u5 7z4 k84 101 05q 3o6 8o  hbs ig3 5yj a2r 33o d6  1lh ecx 7be cmu 
box cj8 dau 0ne fzz 21b h9g aq7 5fv 4c6 nk3 ggk 1st 0v4 79q 6x9 630 76p 0y5 91e ghj 3gz 4l7 5iw 40n h6f lz  f1s 0ad dnt 6oi jia 65c j3k 82v 976 6p  fky 4jd hll 4r5 5wu 280 3yx 0g7 1bw ccj 7lz 03bbclk 1mv 0h6 32q 271 5xt a3l hcm 4ee fdx 9q  987 04o b5r c02 
3ia z0  5gl iad 78k css 16f e9v liw 8fg 7d2 6ar q3u iy5 358 ba  ox9 f0i 41t 544 6ns 7k3 8if don 8q7 19g c8z 77j ine 5hm 19  fl0 k3  3xb i4o 52g cbp bg0 8o5 1cm 83l d5d 64y 719 ih6 hmv 7j  fjc 3o2 8k  hbw ig7 7z0 k80 105 05u 1ll mjd 7ba cmq 5yn a2v 33k d2  
0ay 1d9 6ot 7j4 40s 553 lg  f1n t6  3gg afz 5ij k0e 76m 848 91x 17a e8q 79l crt 5fk pkk 3hf ggv 3p7 cf  h9z ix2 7e5 rh5 1k8 0nx 112 04r b5o k97 hcp 4ex 3n5 9l  32l e5  5xi a3q 7cf clv 1mk 8a3 8n2 1bj ccw 7lg axx 5wh j4  3ye 6m  3a4 4jy 5o9 6qv 7t6 82k d4c 
4m0 5hp gim ne5 0x2 19z 627 77w 6nn jhf ej3 dos g54 f0t 41i h7a q3h a48 n6m 20e lij 0ob jgg 6ao 78v c7f 1rs 0w3 nj4 gfl 5gq 4b1 5ys a2k 33v 266 1lq 0i1 ja4 cml b4u c15 990 05h nlg 8v  hbj 4db 4kc hmk 7w  ncf 83q 961 64d j2l cbm jn5 0f0 1cp 297 w47 4s2 52z 
40w 557 lc  f1j 8he dnm 6op 7j0 c9y 76i 8p4 18d t2  3gc iof 5in 5fo pko 3hb ggr 17e e8u 79h c6x 7e1 kc9 dal 8gd 3p3 cb  q2v ix6 hct if4 3n1 9h  116 04v b5k k93 7cb clr 1mo 8a7 32h e1  5xm a3u i5l 53d j0  3ya 8n6 1bn ccs 7lc 65z 7t2 82o d4g 6i  3a0 ii5 hlu 
0x6 90f 623 77s 4m4 5ht 2c9 3fy my  f0p 41m h7e 6nj baz ej7 dow lin 0of jgc 6ak h8d 4zd n6i bx  3ix 2l8 5gu 4b5 78r c7b 1rw 0w7 1lu 0i5 7bx 6g8 5yw a2o 33r 262 nlc 8r  hbn 4df b4q c11 994 05l 83u 965 6ph j2h 4kg hmo 7s  fjz 293 w43 4s6 5vv 6h9 7my 0f4 1ct 
06  3go afr 5ib c9u 76e 840 18h 0aq 1d1 kl4 jit 4ts 5q3 lo  f1f 347 cn  h9r ps2 bom kc5 1k0 0np 17i e8y 79d c6t 5fc ais 3hn onf 32d o4l 5xa a3y 7cn kef 1mc ebs 1u2 04z b5g r27 hcx 4ep fdm 9d  6e  fkl 4jq 5o1 65v 706 82c 1z3 emr 1bb kjg 7lo axp 53h g2u 3ym 
6nf bav 8is 9l3 mu  ftt 41a h7i 4m8 5hx 2c5 3fu e6b 19r 6v7 7sw st6 6y6 16s 033 3it 2l4 5gy 4b9 h8h 4zh n6e bt  9c2 0oj bnw 6ag bpu cu5 998 0qh few 2jg hbb 4dj hz3 483 3wv 2r6 1ly 0i9 7bt 6g4 6h5 7mu 0f8 1cx g3o 3xw 472 52r 4kk hmc sw  fjv 83y 969 64l j2d 
c9q 76a 844 18l 02  3gk afv 5if 4tw 5q7 lk  f1b 0au 1d5 6ox 7j8 7e9 kc1 1k4 0nt 343 cj  h9v ps6 5fg aiw 3hj ggz 17m m1e b30 c6p 7cj clz 1mg ebw 3vh e9  5xe awu qht 4et 3n9 2ky 1u6 0pv b5c r23 65r 702 82g 1z7 6a  3a8 4ju 5o5 axt 53l j8  3yi emv 1bf kjc 7lk 
mq  f0x 41e h7m 6nb bar 8iw 9l7 e6f 19v 6v3 7ss agl hk4 2c1 3fq 3ip 2l0 hd5 ahm 78z 6y2 16w 037 9c6 0on bns 6ac h8l 4zl n6a bp  fes 8z  hbf 4dn b4y c19 l3l 05d 9ee ecm 7bp 6g0 hz7 487 33z 2r2 g3k 3xs 476 52v 6h1 7mq ell 9jd 8wu 9r5 64h jvh 4ko hmg ss  fjr 
130 06p 7y5 rt5 har 4gz 3l7 2iw 30n g7  5zk a1s 7ad cnt 1oi 8c1 8l0 9ip cau 7ne azz 51b h6  fq7 4o  3c6 ik3 hns 6st 7v4 09q 1x9 8jc dlk 6mv 7h6 42q 571 ne  f3l v4  3ee adx 5kh k2g 74o 8r2 93z 15c m3k bu6 cpv 5di aky 3jd y5  3r5 ad  580 4yx 7g7 6bw dcj 0lz 
hx9 a0i 31t 244 1ns 0k3 jc6 con b6w 69g d8z 07j nne 2hm ybx al0 4ia hoi 5u  nad 08k 943 66f b9v kiw jl7 0d2 1ar g1e ny5 458 50x 4o2 5jr gko ng7 0z0 9vh 605 75u 6ll jjd 0ba 9n9 2yn f2v 43k h5c q1j 4xb n4o 22g 9a8 8dx jee 6cm s24 c5d 14y 019 nh6 gdn 5es ajc 
hav id6 3l3 2is 134 06t 7y1 68y bk0 cnp 1om 8c5 30j g3  5zo a1w i7n 51f h2  fq3 8l4 9it caq 7na 67x 728 09u d6e 4k  3c2 ik7 hnw 42u 575 na  398 8jg dlo 6mr 7h2 k2c 74k 8r6 9wv 28  3ea imd 5kl 5dm ibe 07kyy1  15g m3o bu2 c4z 7g3 6bs dcn 8ef 369 23y 584 iz4 
1nw 0k7 jc2 coj qs5 a0m 31p 240 fgy 2hi qkd 4fd b6s 69c l1f 07n 08o 947 66b b9r 4ie hom 5q  fhx g1a 3zy 4q4 5tt kis jl3 0d6 1av 0z4 92d 601 75q 4o6 5jv gkk ng3 2yj f2r 43o h5g 6lh bcx 0be dmu dbt 0md bly 6ci q1n 4xf n4k 22c 3kz gdj 5ew ajg j98 cqh 1pu 0u5 
30f o6n 5zc aus 7al kgd 1oa 8c9 138 06x b7e 68u 5b2 4gr ffo oj7 4g  fin 4hs 5m3 67t 724 09y 1x1 8l8 9ix khe 7nm azr 51j g0w f57 24  3em adp yj8 k2o 74g 862 93r 0cs 1f3 kn6 bbn 42y 579 nm  394 365 al  588 4yp bmo ka7 1i2 0lr 15k 893 b16 c4v 5da akq 3jl old 
brw 69o d8r 07b fgu 2he qkh 4fh hx1 a0a 3ut 2p4 9gc eak sh6 6e6 6j7 7ow enj 1az g1m 3zu 450 50p 4ii hoa qu  fht 08c 9p3 66n j0f 6ld bct 0bi 9n1 ow  fvv 43c h5k aej 5jz 2a7 3dw 0z8 92h 6t5 7qu j94 c5l 14q 011 3kv 2n6 hf3 ajk q1b 4xj fyw 22o 9a0 0mh blu 6ce 
7ah cnx 1oe mim 30b o6j 5zg auw 5b6 4gv ffk oj3 1w4 0rt 7y9 68q 67p 720 80e 1x5 4c  fij 4hw 5m7 azv 51n g0s f53 eot dj4 cay 7ni k2k 74c 866 93v 20  3ei adt 5kd 4vu 5s5 ni  390 0cw 1f7 6mz bbj bmk ka3 1i6 0lv 361 ah  qtt 4yt 5de aku 3jh y9  15o 897 b12 c4r 
fgq 2ha qkl 4fl brs 69k d8v 07f 9gg eao sh2 6e2 hx5 a0e 31x 248 g1i 3zq 454 50t 6j3 7os enn 9hf 08g 9p7 66j b9z 4im hoe 5y  fhp os  f2z 43g h5o cf0 bcp 0bm 9n5 e4d 92l 609 75y aen hi6 2a3 3ds 3kr 2n2 hf7 ajo j90 c5h 14u 015 9a4 0ml blq 6ca q1f 4xn fys 22k 
0e9 9ia 6k4 7nt 443 51s g0n ws6 pv  fiw 4hj hnb 67m j1e 80x 958 d9q 2   bst 68l hac 4gk ffv 2if 3tw 2q7 5zz a1b 7au 6d5 1ox 0j8 15r 002 j87 6z7 5dx 4a8 3ju 2o5 fxt au  q0a 4yi bmv 6bf ljc 0lk 0cj 9o2 6mg bbw 4vh h4h nt  fwu gjd 3et 4n9 5ky 6u6 7pv e5c 93k 
4ip 5l0 5d  fhm 08z 1y2 66w 737 kif 7on ens 1ac g1t 3zl i6a 50i yz8 a0x 31e o7m 1nb ear 03avkfg b6f 69v 1v3 0ss fgl ok4 5c1 4fq qus 4xs 376 22v 1h1 0mq bll 02beb05 c5u 14h 880 3ko omg 5eb ajr aes 5jc 37  3dn 871 92q k3l 75d ko5 bcm 0bp 1g0 on  387 43z 5r2 
447 51w g0j ws2 eom 9ie 6k0 7np 67i b8y 09d 9q4 4z  fis 4hn hnf hag 4go ffr 2ib d9u 6   b7x 68h 7aq 6d1 9fd mit 3ts 2q3 hy6 a1f hg4 akl 3jq 2o1 15v 006 j83 6z3 bmr 6bb ljg 0lo fxp aq  q0e 4ym 42d h4l np  f3y 0cn 9o6 6mc bbs 6u2 74z e5g 93o ocx 3ep adm hh5 
81f 1y6 66s 733 4it 5l4 qh  3b9 i9  3zh i6e 50m kib 7oj enw 1ag 1nf eav 03arkfc 097matt 31a f8  3m8 2hx 5c5 4fu b6b 69r 1v7 0sw 1h5 0mu 7f8 6cx quw 4xw 372 22r 3kk omc 5ef ajv b01 c5q 14l 884 875 92u k3h 7qh aew 5jg 33  3dj oj  383 4wv 5r6 6ly 7i9 0bt 1g4 
4v  wko 4hb hnj 67e b8u 09h 950 0e1 9ii cal jm4 4p3 5us g0f nx6 30w 257 5zr a1j jb5 cnm 1op 0j0 d9y 06i b7t 68d hak 4gc nof 2in n5l 23d q0i 4ya jdf 6bn dcs 0lc 15z 0t2 s37 c4g 5dp 4a0 ni5 gem gjl nf4 4n1 5kq 616 74v e5k 93c 0cb dlr 6mo jkg 42h hph 2xm f3u 
kin 7of 8m3 1ak i5  3zd i6i 50a 4ix 5l8 5l  3b5 08r d7b 6rw 7w7 7x6 ru6 123 07s 3m4 2ht 5c9 4fy yz0 a0p 31m f4  1nj 8b2 bj7 cow bt5 cqu 1ph 888 3kg x6  5ej ajz 593 p43 3s6 2vv 1h9 0my 7f4 6ct 6lu 7i5 0bx 1g8 of  f2o 43r 562 ilc 5jk w7  3df 879 92y k3d 75l 
67a b8q 09l 954 4r  wkk 4hf hnn 4p7 5uw g0b nx2 0e5 9im 6k8 7nx 7ay 6d9 1ot 0j4 30s 253 5zv a1n hao 4gg ffz 2ij l0e 06m b7p c20 bmz 6bj dcw 0lg fxx ay  q0m 4ye 5dt 4a4 3jy 2o9 1qv 0t6 s33 c4c 612 74r e5o 93g gjh 3ex 4n5 5ku 42l h4d nx  f3q 0cf dlv 6mk jkc 
i1  f48 i6m 50e kij 7ob 8m7 1ao 08v d7f 6rs 7w3 ij4 hot 5h  3b1 3m0 2hp ybe ie5 7x2 69z 127 07w 1nn 8b6 bj3 cos yz4 a0t 31i f0  3kc x2  5en icf b09 c5y 14d m2l dbm 8de 7f0 6cp 597 p47 3s2 22z ob  f2k 43v 566 6lq 7i1 8kd dml 8s5 9vu kwh 75h ilg 5jo w3  3db 
h85 4z5 35p 200 1jw 0o7 7dz ckj b2s 6yk dxv 03n fcy zx  hdl 4bd 4me hkm 1q  flx 0xg 907 62b byz cdk jh3 ejf 1ev g5a n99 4u4 5pt 4k6 5nv gok nc3 e0l 96d 641 71q 6hh bgx 0fe diu 29b f6r 47o h1g hzn 48n f9s dz  dft 0id bhy 6gi 7zx cuh 1tu 0q5 3oz oir 5aw 4d7 
174 02t 799 6xq hev 00bg3h3 2ms 34j c3  092fa5w bo0 cjp 1km 8g5 8h4 1dl ceq 7ja i3n 55f l2  fu3 0k  3g2 io7 hjw 63x 768 84m 185 8ng dho 6ir 7l2 46u 535 ja  3y0 68  3aa iid 5ol k6c 70k 8v6 1zn 11g 8y7 bq2 c0z ya5 ife fd0 99  329 27y q4t 49t 7c3 6fs dgn 8af 
1js 0o3 jg6 ckn h81 4z1 35t 204 nje 2lm hdh ah0 b2w 6yo dxr 03j 0xc 903 62f j4n 4ma hki 1u  ned g5e w25 418 54x cdo jh7 ejb 1er e0h 9rh 645 71u 4k2 5nr goo nc7 29f f6v 47k h1c 6hl jnd 0fa 9j9 9e8 ec0 jae 6gm hzj 48j f9w 26g nl6 oiv 5as 4d3 jy4 c1d 10y 059 
her 4cz 3h7 2mw 170 02p b3m 6xu 7ed cjt 1ki 8g1 34n c7  092ba5s i3j 55b l6  fu7 8h0 1dh ceu 7je 6wt 7r4 0yy 181 0o  3g6 io3 hjs 46q 531 je  3y4 8nc dhk 6iv 7l6 k6g 70o 8v2 1zj r4  3ae pbh 5oh ya1 aoy 3nd gat 11c 8y3 bq6 ctv 7c7 6fw dgj 0hz 3v5 ed  5x8 49p 
bvs 6yc l5n 03f fcq zp  hdd 4bl q35 a4e 35x 208 9cg eeo 7dr 6a2 6n3 7ks ejn 9lf g5i n91 414 54t 4mm hke 1y  flp 0xo 9t7 62j byr cb0 bgp 0fm 9j5 ks  f6z 47g h1o aan hm6 2e3 wh3 e0d 96l 649 71y 7zp c1h 10u 055 3or 2j2 hb7 ano hzf 48f n0c dr  9e4 0il bhq 6ga 
34b o2j 092naqw 7eh cjx 1ke edu 1s4 0vt 791 6xy 5f6 4cv fbk on3 0c  fmj 4lw 5i7 63p 760 0yu d2m ekt 1dd cey 7ji i3f 55n g4s f13 60  3ai iil 5od k6k 70c 826 1zf 0gw 1b7 6iz bfj 4ru 5w5 ji  3y8 321 eh  5x4 pu4 bik ke3 1m6 0hv 11o ezw b52 c0r 09hdaou 3nh 91  
fcu zt  qoh 4bh bvw 6yg dxz 03b 9cc eek 7dv 6a6 h89 4z9 3qt 2t4 g5m n95 410 54p 6n7 7kw ejj 1ez 0xk 9t3 62n byv 4mi hka uu  flt kw  frv 47c h1k 6hd bgt 0fi 9j1 eth 96h 6p5 7uu aaj 5nz 2e7 wh7 3ov 2j6 hb3 ank 7zt c1l 10q 051 9e0 0ih bhu 6ge hzb 48b n0g dv  
7el kcd 1ka 8g9 34f o2n 092jaqs 5f2 4cr fbo on7 178 02x 795 r45 63t 764 0yq 189 0g  fmn 4ls 5i3 i3b 55j g4w f17 8h8 9mx kle 7jm k6o 70g 822 1zb 64  3am iih yn8 46y 539 jm  f7d 0gs 1b3 kj6 bfn bio ke7 1m2 0hr 325 el  5x0 49x ya9 aoq 3nl 95  11k ezs b56 c0v 
4mt 5h4 uh  3f9 0xv d3n 62s 773 cdz 7kj ejw 1eg m9  f00 i2e 54m 093mapt 35a b8  1jf eev 7dk kbc 782 6yz 1r7 0ww 3i8 zi  5g5 4bu 5y7 pt7 332 dk  1l5 0iu 7b8 6gx 7zi c1q 10l m6d 3ok 82  5af anv aaw 5ng 73  07as835 96u czx 7uh 6hy 7m9 0ft 1c4 kj  f6c 4sv 5v6 
ekm 9me 6o0 7jp 407 55w 2z2 n82 0z  fms 4ln hjf 63i bxq 0yl 9u4 9z5 02e b3x c68 heg 4co fbr 2mb 3ps 2u3 q26 a5f 7eq cja 9bd edl 11v 046 ss3 c0k hc4 aol 3nq 2k1 f8x eq  q4e 49e bir 6fb 9d7 0ho 0gn 9k6 6ic bfs 46d h0l jp  f7y 2d0 3ap iiu hl5 6q2 70z e1g 97o 
0xr d3j 62w 777 4mp 5h0 1d  flm g5t f04 i2a 54i kmf 7kn ejs 1ec 1jb eer 7do kbg 093ia4x 35e o3m fcl zm  5g1 4bq 786 kz6 1r3 0ws 1l1 0iq bhl kd4 5y3 pt3 336 do  3oo 86  5ab anr 7zm c1u 10h 8x8 831 96q k7l 71d aas 5nc 77  07awkn  f6g 47z 5v2 kk5 bgm 0fp 1c0 
403 55s 2z6 n86 0a9 1dy 6o4 7jt 63m bxu 0yh 918 tv  fmw 4lj hjb hec 4ck fbv 2mf 9z1 02a bwt 6xd 7eu cje 1kx 0n8 3pw 2u7 q22 a5b hc0 4e8 3nu 2k5 11r 042 ss7 c0o biv 6ff 9d3 0hk n1d eu  q4a 49a 4rh h0h jt  fsu 0gj 9k2 6ig bfw 6q6 7tv e1c 97k 2d4 3at 4j9 5oy 
cdr 7kb 8i7 1eo m1  f08 i2m 54e in4 hkt 1h  3f1 85n 196 6vs 7s3 b2j 6yr 167 03w 3i0 za  hdu ia5 093ea4t 35i b0  1jn 8f6 7dc cks 7za c1y 10d 8x4 3oc oik 5an igf hzw 48w 3w2 dc  dfm mj5 7b0 6gp 6hq 7m1 8od dil kb  3x3 47v 526 ihg 5no s3  fj2 8w5 9ru czp 71h 
0r  ndc 4lf hjn 63a bxy 0yd 914 0a5 1du 6o8 7jx 4t7 5qw g4b w32 34s 213 h96 a5n 7ey cji 1kt 0n4 dyu 02m b3p 6xh heo 4cg fbz 2mj f8p ey  q4m 49m biz 6fj dgw 0hg 1uv 0p6 jx3 c0c qh4 4e4 3ny 2k9 2d8 3ax 4j5 5ou 652 70r e1o 1zw 0gf dhv 6ik joc 46l h0d jx  f7q 
m5  ft4 i2i 54a cdv 7kf 8i3 1ek 0xz 192 6vw 7s7 4mx 5h8 1l  3f5 3i4 ze  5g9 4by b2n 6yv 163 03s 1jj 8f2 7dg ckw 093aa4p 35m b4  3og oio 5aj anz 7ze cuu 1th 8x0 1l9 0iy 7b4 6gt hzs 48s 3w6 dg  kf  3x7 47r 522 6hu 7m5 0fx 1c8 839 96y czt 71l ihc 5nk s7  fj6 
63e j5m 84p 910 0v  ndg 4lb hjj 4t3 5qs g4f w36 0a1 1dq cel ji4 jf5 cjm 1kp 0n0 34w 217 h92 a5j hek 4cc nkf 2mn 9z9 02i b3t 6xl skn 6fn dgs 0hc f8t 27d q4i 49i hc8 4e0 nm5 gam 11z 0p2 jx7 c0g 656 70v e1k 1zs gnl nb4 4j1 5oq 46h hth 28e f7u 0gb dhr 6io jog 
qsu i95 310 fi  1n7 0kw bjj 6ez 7xk c3s 12n eyv 3mi gby 5cd alt acu 5le 51  3bh 817 1yg cxz 73b ki3 bek 0dv 1a6 ih  3z9 4qt 5t4 4ov 5j6 3b  fnk 0zt d1l 60q 751 cfx 7ih ehu 1ge g7r 38b i0g 56o 59n arv 37c g8s 1hd egt 7fi ciy bth kx0 1p5 0uu faj xk  5e7 ph7 
13t g   7yq 689 ha6 amn 3ls 2i3 n3b gs  hyg a17 bkp cn0 9f5 0jm 0el 9i4 6ka bdq 44f h2n hr  fqs 2f2 3cr abo hn7 678 72x 095 95m eio 9og 6m2 7hr 425 57u 2x0 39x 2x  foq 4nl hhd 61k bzs 8rv 9w6 9x7 00g b1z 6zb hge 4am nih yq  36y 239 58t a7d 7gs 6b3 lj6 efn 
1n3 0ks bjn kf6 hxy i91 314 fm  3mm oke yb8 alp 7xo c3w 12j eyr 813 1yc k5n 73f acq 5la 55  3bl il  f4e 45x 508 ki7 beo 0dr 1a2 0zp d1h 60u 755 4or 5j2 3f  fno g7v 38f i0c 56k kod 7il 8k9 1ga 9ax 8d8 7fm rkm 59j a6z 37g g8w fan xo  5e3 ph3 b0d kx4 149 01y 
5bz amj 3lw 2i7 13p c   7yu c2m bkt 6dd 9f1 0ji n3f gw  hyc a13 44b h2j hv  fqw 0eh 9i0 6ke bdu 6s4 7vt 091 1xy 2f6 3cv abk hn3 421 57q 2x4 wu4 eik 9oc 6m6 7hv 61o bzw 86z 9w2 vt  fou 4nh qch hga 4ai nil yu  9x3 00c buv 6zf 7gw 6b7 1iz efj 3ru 2w5 58p 4y8 
7xc cws 12f 8z6 3ma gbq 5cl ied hxu p25 318 fa  ddo 8bg bjb 6er 6js 7o3 8mf dkn o81 3z1 45t 504 ije 5lm 59  fh0 8u7 1yo cxr 73j cfp bc0 8k5 1gm o3  38j a9w 56g il6 hiv 3j  3d3 87l d1d 60y 759 b0h kx8 145 01u 3k2 xc  hfw ic7 59f a6v 37k o1c 1hl 8d4 7fa ciq 
n3j 25b hyo au7 bkx 6dh deu 0je 1wt o   7yy 681 5bv 4g6 no3 gck glj 3cz 4h7 5mw 670 72p e3m 1xu 0ed djt 6ki bdy 44n h2f hz  f5s 2p  foy 4nd hhl 61c j7k 86v 936 0c7 1fw cgj 7hz 4v5 5su 2x8 39p 36q 231 qt4 4y4 jd3 chk 1iv 0l6 l6g 00o b1r 6zj hgm 4ae wbh yy  
3me gbu 5ch alx 7xg cww 12b 8z2 ddk 8bc bjf 6ev hxq i99 3u4 fe  id  3z5 45p 500 6jw 7o7 0dz dkj 8u3 1yk cxv 73n acy 5li q5  3bd o7  38n a9s 56c cft 7id 8k1 1gi 0zx duh 6tu 7q5 4oz hir 3n  3d7 3k6 xg  hfs ic3 b0l rs4 141 01q 1hh 8d0 7fe ciu 59b a6r 37o o1g 
jbd 6dl 9f9 0ja n3n 25f hyk au3 5br 4g2 no7 gco 13x k   jz5 685 674 72t 099 1xq gln 07bg4h3 5ms 44j h2b g07 f5w 8lx 9i8 6km jme 61g j7o 86r 932 2t  nfe ad0 hhh 429 57y g6d 39t 0c3 1fs cgn jk6 jd7 cho 1ir 0l2 36u 235 58x 4y0 hgi 4aa nid 2ol l6c 00k b1v 6zn 
4i4 5lt 2g9 3by e2n 1yv 663 73s 6jj bez 0dg dkw iy  f4p 45m h3e hxl at4 n2i fx  ddv 0kf jcc 6ek 7xz 692 1vw 0s7 3mx 2h8 5cu 4f5 qu7 4x7 37r 222 1hu 0m5 7fx 6c8 b0q c51 dzt 01l nhc xz  hfn aj6 4og hio 3s  fnz 0ze 925 6th j6h 6l9 7iy 0b4 1gt g7c 38s 4w6 5rv 
8le djm 6kp 7n0 44w 517 hc  f5j p2  3cc ikf 5mn cyq 72i 8t4 1xl 13e v   b78 c2x 5bo idg 3lb gcr 3t3 gb  hyv p36 7a1 6dq del 8cd 156 00v b1k 6zs hgt ib4 3j1 2oq 36h a1  58e a7u 7gb chr 1io 8e7 8j6 1fn cgs 7hc a8t 57d n0  39i 2i  3e0 im5 hhu 61z 7p2 86o d0g 
e2j 1yr 667 73w 4i0 5lp gmm na5 g14 f4t 45i h3a 6jn jlf 0dc dks ddr 0kb jcg 6eo hxh a08 n2m 24e nn4 gbl 5cq 4f1 s46 696 1vs 0s3 1hq 0m1 je4 cil qu3 4x3 37v 226 nhg 2no hfj aj2 b0u c55 9y8 01h 0za 921 60d j6l 4oc hik 3w  ngf g7g 38w 4w2 56z cfm jj5 0b0 1gp 
44s 513 hg  f5n 0ey dji 6kt 7n4 cyu 72m 808 1xh p6  3cg abz 5mj 5bk idc 3lf gcv 13a r   7yd cvt 7a5 6du 1o8 0jx 3t7 gf  hyr p32 5d8 4ax 3j5 yd  152 00r b1o 6zw 7gf chv 1ik 8e3 36l a5  58a a7q a8p 5sh n4  39m 8j2 1fj cgw 7hg 6uv 7p6 86k d0c 2m  3e4 4ny 5k9 
6jb ber 0do 9h7 iq  f4x 45e h3m acl ho4 2g1 3bq 086 94n 6r3 7ws 7xr c3j 12w 077 3mp 2h0 01bdalm hxd a04 n2a fp  9g6 0kn bjs 6ec b0y c59 9y4 01d fas xr  hff xa6 59w a6g 37z 2v2 9ae egm 7fp 6c0 6l1 7iq ehl 9nd 2y3 wt3 436 56v 4oo hig ws  fnr 0zm 9v5 60h jrh 
42  3ck abv 5mf cyy 72a 804 1xd 0eu dje 6kx 7n8 4pw 5u7 hk  f5b 303 gj  5z6 i86 7a9 6dy 1o4 0jt 13m exu 7yh c2p 5bg amw 3lj gcz 3rh a9  58m asu 7gj chz 1ig efw 1q6 0tv b1c ky3 5d4 4at 3j9 yh  2a  3e8 4nu 5k5 61r 742 86g d0o eiv 1ff knc 7hk i1d 57l n8  39a 
iu  fpt 45a h3i 6jf bev 0dk 9h3 082 1yz 6r7 7ww 4i8 5lx 2g5 3bu 3mt 2h4 5cy 4f9 7xv c3n 12s 073 9g2 0kj bjw 6eg qsh a00 n2e ft  faw xv  hfb xa2 btu cq5 9y0 0uh 1hy 0m9 7ft 6c4 59s a6c 3sv 2v6 2y7 wt7 432 56r 6l5 7iu 0b8 1gx 0zi 929 60l j6d 4ok hic ww  fnv 
k4m 72e 800 95p 46  3co abr 5mb 4ps 5u3 ho  f5f 0eq dja kh4 bdl bkm kg5 1o0 0jp 307 gn  5z2 i82 5bc ams 3ln ojf 13i z   7yl c2t 7gn kaf 1ic efs 36d g9t 58i a7y 5d0 4ap niu yl  1q2 00z b1g ky7 61v 746 86c d0k 2e  fol 4nq 5k1 a8x 57h g6u 39e eir 1fb kng 7ho 
fjl 7e  5n1 4kq 716 64v d5k 83c 1cb elr 7mo kkg 52h ayp 3xm g3u o5l 33d a2y 5ya kdf 7bn ecs 1lc 05z 1t2 r37 b4g 4dp 5a0 8d  fem bn  357 4zr h8r kb5 bnm 0op 1j0 e9y 16i c7t 78d ahs 5gc oof 3in 3fo 16  5hb agr 77e c8u 19h 850 1e1 8ii bal km4 5p3 4us f0f mo  
7lu 6i5 1bx 0g8 3yw g2o 53r 462 hlc 4jk fkv rw  979 82y j3d 65l ct5 bqu 0ph 988 2kg fdw 4ej hcb 493 q43 2s6 3vv 0h9 1my 6f4 7ct 6x6 su6 023 17s 2m4 3ht 4c9 5fy a50 h9h ct  fzu 0nj 9b2 cj7 bow jin 6of 9m3 0ak fut lu  h6i 40a 5ix 4l8 3gu 2b5 18r e7b 7rw 6w7 
712 64r d5o 83g fjh 7a  5n5 4ku 52l ayt 3xi k8  1cf elv 7mk kkc cmz 7bj ecw 1lg d9  3wh avu 5ye 4dt 5a4 2jy 3o9 0qv 1t6 r33 b4c 6ay 7d9 0ot 1j4 bj  353 4zv h8v ahw 5gg gfz 3ij m0e 16m c7p b20 77a c8q 19l 854 3fk 12  5hf agv 5p7 4uw f0b mk  1e5 8im 7k8 6nx 
3ys g2k 53v 466 7lq 6i1 9kd eml 9s5 8vu jwh 65h hlg 4jo fkr rs  9z  fds 4en hcf c09 b5y 04d l2l ebm 9de 6f0 7cp 497 q47 2s2 32z 2m0 3hp aim he5 6x2 79z 027 17w 0nn 9b6 cj3 bos a54 h9l cp  fzq f1x lq  h6m 40e jij 6ob 9m7 0ao 18v e7f 7rs 6w3 hj4 afl 3gq 2b1 
1cj 8o2 7mg cbw 5vh ayx 3xe k4  fjd 7m  5n9 4ky 7u6 6pv d5c 83k 05r 102 k87 7z7 4dx 5a8 8l  3o5 d5  33l a2q 5yi cmv 7bf mjc 1lk e9q 16a cst 78l iac 5gk z7  3if bf  3q7 4zz h8z 6au 7d5 0ox 1j8 1e9 8ia 7k4 6nt 543 41s f0n mg  3fg u6  5hj agz 77m k1e 90x 858 
hlk 4jc nbf 6w  971 82q j3l 65d jo5 ccm 1bp 0g0 nz7 287 53z 4r2 a3k 5xs 276 32v 0h1 1mq cll 03bec05 b5u 04h 980 9v  nmg 4eb hcj a58 q2h 21e n7m 0nb dar za7 jfg c6f 79v 0v3 1ss ggl nk4 4c1 5fq 5ip 4l0 nd5 ghm 18z 0y2 76w 637 jif 6on dns 0ac f1t 2zl h6a 40i 
52d i4l 3xa k0  1cn 8o6 7mc cbs 7u2 64z d5g 83o ncx 7i  hmu ih5 ig4 hbt 8h  3o1 05v 106 k83 7z3 cmr 7bb mjg 1lo d1  33h a2u 5ym iag 5go z3  3ib e9u 16e c7x 78h 6aq 7d1 8fd lit bb  3q3 iy6 q3v 547 41w f0j mc  dom 8ie 7k0 6np 77i c8y 19d 8q4 3fc u2  5hn inf 
975 82u j3h 6qh hlo 4jg fkz 6s  nz3 283 5wv 4r6 7ly 6i9 1bt 0g4 0h5 1mu 6f8 7cx a3o 5xw 272 32r 9r  nmc 4ef hcn c01 b5q 04l 984 0nf dav za3 jfc aq4 h9d cx  fzy 2m8 3hx 4c5 5fu c6b 79r 0v7 1sw 91f 0y6 76s 633 5it 4l4 3gy 2b9 f1p ly  h6e 40m jib 6oj dnw 0ag 
265 33u 488 5yp cmo ja7 0i2 1lr 05k 993 c16 b4v 4da hbi 8u  nld nce 7t  hmh aa0 j2o 64g 962 83r 1cs 0f3 jn6 cbn 52y 479 w44 294 ne6 gin 5hs 4m3 77t 624 19y 0x1 9l8 8ix jhe 6nm h7b 41j f0w g57 20f n6n 4zc h8c 6al jgd 0oa 9c9 038 16x c7e 78u 4b2 5gr gfo nj7 
k94 b5l 04q 111 9o  3n6 if3 hcs a3r 5xj e6  32o 8a0 1mh clu 7ce 7ld cct 1bi 8n1 3yf j7  53c i5k hlr 4jz 3a7 6n  1z8 82h 7t5 6qu 7j7 6ow dnj 0az f1m ld  550 40p 5ii afy 3gd t5  18c 8p3 76n k0f crw 79o e8r 17b ggu 3he aix 5fh ix1 h9y ce  3p4 8gc dak rh6 7e6 
cmk ja3 0i6 1lv 261 33q a2l 5yt 4de hbm 8q  fex 05o 997 c12 b4r j2k 64c 966 83v fjy 7p  hml 4kd 5vu 4s5 3xx 290 1cw 0f7 7mz cbj 77p 620 90e 0x5 3fz gij 5hw 4m7 h7f 41n f0s mz  dot ej4 bay 6ni 6ah bnx 0oe lim 20b n6j 4zg h8g 4b6 5gv gfk nj3 0w4 1rt 6y9 78q 
9k  3n2 if7 hcw k90 b5h 04u 115 8a4 1ml clq 7ca a3v 5xn e2  32k 3yb j3  53g i5o bf0 ccp 1bm 8n5 d4d 82l 709 65y hlv ii6 3a3 6j  f1i 2zq 554 40t 7j3 6os dnn 8hf 18g 8p7 76j c9z 5im ioe fm0 09  ggq 3ha pkl 5fl crs 79k e8v 17f 8gg dao rh2 7e2 ix5 q2u ca  348 
05c l3k cu6 bpv 4di hba 2jd fet 2r5 3wu 480 5yx 6g7 7bw ecj 1lz 9jc elk 7mv 6h6 52q 471 3xt g3l fju st  qfh 4kh j2g 64o 9r2 83z 9l0 8ip bau 6ne h7j 41b ftw mv  3fv 2c6 hk3 agk 7st 6v4 19q 0x9 030 16p 6y5 st5 ahj 5gz 2l7 3iw bw  n6f 4zk h8k 6ad bnt 0oi 9c1 
a3z 5xb o4o 32g 8a8 9dx kee 7cm r24 b5d 04y 119 9g  fdn 4es qhs 5o2 4jr fko 6f  1z0 8vh 705 65u 7ll kjd 1ba 8n9 3yn g2v 53k axs 5ia afq 3gl 05  18k 843 76f c9v jiw kl7 1d2 0ar f1e ll  558 40x ix9 h9q cm  344 0ns 1k3 kc6 bon c6w 79g e8z 17j one 3hm aip yg8 
4dm hbe 8y  fep 05g l3o cu2 b4z 6g3 7bs ecn 9ef 269 33y 484 hz4 52u 475 3xp 298 9jg elo 7mr 6h2 j2c 64k 9r6 8wv fjq 7x  hmd 4kl h7n 41f fts mr  9l4 8it baq 6na 77x 628 19u e6e 3fr 2c2 hk7 ago ahn hd6 2l3 3is 034 16t 6y1 78y ck0 bnp 0om 9c5 bs  n6b 4zo h8o 
ebt 1md cly 7ci awv 5xf o4k 32c 9c  fdj 4ew qhw k98 bqh 0pu 1u5 1z4 82d 701 65q 5o6 4jv fkk 6b  3yj g2r 53o axw 7lh ccx 1be emu 18o 847 76b c9r 5ie afu 3gh 01  f1a lh  5q4 4tt jis kl3 1d6 0av 0nw 1k7 kc2 boj ps5 h9u ci  340 ggy 3hi ait 5fd c6s 79c m1f 17n 
ng4 gkl 5jq 4o1 75v 606 92c 0z3 dmr 0bb jjg 6lo hqh 43h f2u 2ym 22d n4l 4xa q1i 6cn jef 0mc dbs 0u2 14z c5g s27 icx 5ep gdm nh5 247 31w a0j qs2 com jc5 0k0 1np 07i d8y 69d b6t 4fc qkc 2hn nnf nag 5v  hoj 4ib b9u 66e 940 08h 1aq 0d1 jl4 kit 5ts 4q3 ny6 g1f 
7h5 6mu 1f8 0cx f3o nf  572 42r 5kk imc 3ef v7  93y 869 74l k2d cpu bu5 898 1qh y6  3jg akz 5dj iz3 583 ag  3r6 0ly 1i9 6bt 7g4 rt6 7y6 06s 133 2it 3l4 4gy 5b9 a1p 5zh g4  30m 8c2 1oj cnw 7ag 7nf cav 9is 8l3 fq4 h5  51a azy 5m8 4hx 3c5 4l  d6b 09r 7v7 6sw 
75r 602 92g 0z7 3dx 2a8 5ju 4o5 h5d 43l f2q ox  dmv 0bf jjc 6lk 6cj blz 0mg dbw 2vh fyx 4xe q1m ajd 5et 2n9 3ky 0u6 1pv c5c s23 6e9 jc1 0k4 1nt 243 31s a0n qs6 4fg qkg 2hj fgz 07m l1e c30 b6p b9q 66a 944 08l nac 5r  hon 4if 5tw 4q7 3zz g1b 1au 0d5 7ox 6j8 
f3k nb  576 42v 7h1 6mq dll 8jd 9wu 8r5 74h kvh 5ko img 3eb v3  y2  3jc ibf 5dn c4y b19 m3l 15d 8ee dcm 6bp 7g0 iz7 587 ac  3r2 2ip 3l0 id5 hau 68z 7y2 06w 137 8c6 1on cns 7ac a1t 5zl g0  30i f58 h1  51e i7m 7nb car 9iw 8l7 d6f 09v 7v3 6ss hnt ik4 3c1 4h  
9n2 0bj bcw 6lg h5h 4wh fvu ot  3dt 2a4 5jy 4o9 7qv 6t6 92k e4c 012 14r c5o j97 ajh 5ex 2n5 3ku 22l fyt 4xi q1a 6cf blv 0mk 9a3 07a d8q 69l brt 4fk qkk 2hf fgv 2p7 3uw a0b hx2 6e5 sh5 0k8 1nx 1ay 0d9 7ot 6j4 50s 453 3zv g1n fhw qv  hob 4ij j0e 66m 948 81x 
5kc ads 3en 27  93q 861 74d k2l bbm kn5 1f0 0cp 397 nn  5s2 42z 4ys qts ao  366 0lq 1i1 ka4 bml c4u b15 890 15h olg 3jo akr 5db a1x 096io6m 30e mij 1ob kgg 7ao 68v b7f 0rs 1w3 oj4 ffl 4gq 5b1 5m0 4hp fim 4d  1x2 09z 727 67w 7nn khf dj3 eos f54 g0t 51i azq 
h5l 43d f2y op  9n6 0bn bcs 6lc 75z 6t2 92o e4g 3dp 2a0 hi5 aem ajl hf4 2n1 3kq 016 14v c5k j93 6cb blr 0mo 9a7 22h fyp 4xm q1e 4fo qko 2hb fgr 07e d8u 69h b6x 6e1 jc9 eal 9gd 2p3 3us a0f hx6 50w 457 3zr g1j 9he enm 7op 6j0 b9y 66i 9p4 08d fhs 5z  hof 4in 
93u 865 7ph k2h 5kg adw 3ej 23  393 nj  5s6 4vv 7h9 6my 1f4 0ct 0lu 1i5 6bx 7g8 4yw qtw ak  362 olc 3jk akv 5df c4q b11 894 15l min 1of kgc 7ak aut 5zd g8  30a 2ix 3l8 4gu 5b5 68r b7b 0rw 1w7 1x6 80f 723 67s 5m4 4ht 3c9 ph  f50 h9  51m azu 7nj caz dj7 eow 
22u 375 4xp 598 02bfblo 0mr 1h2 883 14k c5v b06 ajq 5ea omd 3kl 3dm 34  yk8 aep 75g k3o 92r 872 1g3 0bs bcn ko6 569 43y 384 om  fhn 5g  5l3 4is 734 66t 1y1 08y 9hx 8m8 7om kie 50j i6b 3zo g1w o7n 31f ats 01zzkfd 03au8b9 1na 07x 128 69u b6e 4fr 5c2 ok7 fgo 
6z4 j84 001 15q 2o6 3jv akk hg3 4yj q0b av  fxw 0lh dcx 6be bmu bbt 6md 9o1 0ci fwv nw  h4k 42c 5kz adj 3ew gjg 93h eqh 7pu 6u5 7nw 6k7 9ib eoj ws5 g0m 51p 440 hna 4hi fit pu  9q3 09c j1f 67n 68o bsw 1   d9r 2ie ffu 4gh qjh a1a 5zy 2q4 3tt mis 9fc 6d6 7av 
02bbblk 0mv 1h6 22q 371 4xt qut aju 5ee x9  3kh 887 14o c5r b02 75c k3k 92v 876 3di 30  5jd aet 5r5 4wu 380 oi  1g7 0bw bcj 6lz 730 66p 1y5 81e fhj 5c  5l7 4iw 50n i6f 3zk g1s 1ad ent 7oi kia cox bj8 eau 1ne gzz 31b atw 097n4fv 5c6 ok3 fgk 0st 1v4 69q 7x9 
2o2 3jr ako hg7 6z0 j80 005 15u 0ll ljd 6ba bmq 4yn q0f ar  fxs f3z ns  h4o 42g bbp cg0 9o5 0cm 93l e5d 74y 619 hh6 adn 3es gjc nx9 g0i 51t 444 7ns 6k3 9if eon 9q7 09g b8z 67j hne 4hm fip 4y  2ia ffq 4gl had 68k bss 5   d9v miw 9fg 6d2 7ar a1e hy5 258 30x 
m2k 14c cqv bt6 ajy 5ei x5  3kd 2vu 3s5 4xx 590 6cw 7f7 0mz dbj dmk 8kc 7i6 6lv 561 43q f2l oe  3de w4  5jh aex 75o k3g 92z 8s2 1ah 8m0 7oe kim 50b i6j 3zg i6  3b6 5o  hos ij3 7w4 6rt 1y9 08q 07p 120 ru5 7x5 4fz qkz 2hw 3m7 f7  31n a0s yz3 cot bj4 8b1 1ni 
4yb q0j 23g n5o 8ex dcp 6bm jde c4d s34 009 15y gen ni6 4a3 5ds 5kr 4n2 nf7 gjo 9wh e5h 74u 615 jkd 6ml 9o9 0ca f3v 2xn h4c 42k hni 4ha wkl 4u  953 09k b8v 67f jm7 cao 9ij 0e2 nx5 g0e 51x 448 a1i 5zq 254 30t 0j3 1os cnn jb6 68g b7w 9   d9z 2im noe am0 hah 
ice 5em x1  fa0 m2o 14g c5z bt2 6cs 7f3 8df dbn 22y 379 p44 594 565 43u 388 oa  dmo 8kg 7i2 6lr 75k k3c 9vv 8s6 3da 38  5jl ild 50f i6n 3zc i2  1al 8m4 7oa kii 738 66x d7e 08u 3b2 5k  how ij7 ie6 ybf 2hs 3m3 07t 124 69y 7x1 cop bj0 8b5 1nm f3  31j a0w yz7 
0ld dct 6bi bmy 4yf q0n az  n5k gej 3jz 4a7 5dw 6z8 j88 0t5 1qu 93d e5l 74q 611 5kv 4n6 nf3 gjk f3r 2xj h4g 42o bbx 6mh dlu 0ce 957 09o b8r 67b hnm 4he fix 4q  nx1 g0a 5ut 4p4 jm3 cak 9in 0e6 0j7 1ow cnj 7az a1m 5zu 250 30p 2ii ffy 4gd hal 68c b7s 06n l0f 
7l1 6iq dhl 8nd 3y3 jb  536 46v 5oo iig 3ab r3  1zm 8v5 70h krh c0y b59 8y4 11d gas 3nc iff ya6 49w q4w ec  3v2 8ae dgm 6fp 7c0 6xr b3j 02w 177 2mp 3h0 00bdheu a5t 092ec0  34i 8g6 1kn cjs 7ec 7jb cer 1do 8h7 f18 l1  55e i3m hjt io4 3g1 0h  186 84n 7r3 6ws 
nc0 2e8 5nu 4k5 71r 642 96g e0o div 0ff jnc 6hk h1d 47l f6q kx  dy  f9p 48m hzm 6gj bhz 0ig dfw 0q6 1tv c1c jy3 4d4 5at 2j9 3oy 203 35s 4z6 h86 6a9 7dy 0o4 1jt 03m dxu 6yh b2p 4bg hdo 2lj fcz nec 1r  hkn 4mf byy 62a 904 0xd 1eu eje 7kx 6n8 5pw 4u7 w22 g5b 
3y7 jf  532 46r 7l5 6iu 1b8 0gx 1zi 829 70l k6d 5ok iic 3af r7  gaw 3ng aoz ya2 ctu bq5 8y0 1uh 0hy 1m9 6ft 7c4 49s q4s eg  3v6 2mt 3h4 4cy 5f9 6xv b3n 02s 173 8g2 1kj cjw 7eg a5p 092ac4  34m fu4 l5  55a i3i 7jf cev 1dk 8h3 182 0yz 7r7 6ww 5i8 4lx 3g5 0l  
71v 646 96c e0k nc4 gol 5nq 4k1 huh 47h f6u 29e dir 0fb jng 6ho 6gn jaf 0ic dfs 26d f9t 48i hzi 4d0 5ap oiu nl5 0q2 10z c1g jy7 ckm jg5 0o0 1jp 207 35w 4z2 h82 4bc hdk 2ln njf 03i dxq 6yl b2t j4m 62e 900 85p neg 1v  hkj 4mb 5ps 4u3 w26 g5f 1eq eja jh4 cdl 
5og iio 3aj 63  1ze 825 7th k6h 7l9 6iy 1b4 0gt f7c jj  5w6 4rv pu7 5x7 ek  322 0hu 1m5 6fx 7c8 c0q b51 ezt 11l 92  3nk aov 09hgaqt 092mc8  34a edv 1kf kcc 7ek 6xz 792 0vw 1s7 2mx 3h8 4cu 5f5 5i4 4lt 3g9 th  d2n 0yv 763 63s 7jj cez 1dg ekw f10 l9  55m i3e 
9j6 0fn bgs 6hc h1l 47d f6y kp  nc8 2e0 hm5 aam 71z 6p2 96o e0g 056 10v c1k 7zs anl hb4 2j1 3oq dq  f9x 48e hze 6gb bhr 0io 9e7 03e l5m c78 b2x 4bo hdg zs  fcr 2t3 3qs a4f q36 6a1 7dq eel 9cd 9le ejm 7kp 6n0 54w 417 n92 g5j fls 1z  hkf 4mn byq 62i 9t4 0xl 
1za 821 70d k6l 5oc iik 3an 67  f7g jn  5w2 46z bfm kj5 1b0 0gp 0hq 1m1 ke4 bil pu3 5x3 eo  326 96  3no aor 09hcc0u b55 8y8 11h edr 1kb kcg 7eo a5x 092io2m 34e on4 fbl 4cq 5f1 r46 796 0vs 1s3 d2j 0yr 767 63w 5i0 4lp fmm 0d  f14 g4t 55i i3a 7jn klf 1dc eks 
h1h 4sh fru kt  9j2 0fj bgw 6hg 7uv 6p6 96k e0c wh4 2e4 5ny 4k9 4d8 5ax 2j5 3ou 052 10r c1o 7zw 6gf bhv 0ik 9e3 du  n0d 48a hza 4bk hdc zw  fcv 03a dxy 6yd bvt 6a5 7du 0o8 1jx 2t7 3qw a4b q32 54s 413 n96 g5n 1ey eji 7kt 6n4 byu 62m 908 0xh flw uv  hkb 4mj 
c0h jx8 045 11u 2k2 3nr aoo hc7 49f q4f er  n1c 0hl 9d4 6fa biq bfp cc0 9k5 0gm f7z js  h0o 46g hl6 iiv 3as 2d3 97l e1d 70y 659 7js 6o3 9mf ekn n81 2z1 55t 404 hje 4lm fmp 0y  9u7 0yo bxr 63j 6xc bws 02f 9z6 2ma fbq 4cl hed a5e q25 218 34x edo 9bg cjb 7er 
dh  331 pt4 5y4 kd3 bhk 0iv 1l6 m6g 10o c1r 7zj anu 5ae 81  3oh fj9 70  5nd aat 71c k7k 96v 836 1c7 0fw bgj 6hz 5v5 4su 3x8 ki  flj 1c  5h7 4mw 770 62p d3m 0xu 1ed ejt 7ki cdy 54n i2f f03 g5s o3j 35b apw 093nckx 7dh eeu 1je 0wt 1r4 6yy 781 4bv 5g6 zj  fck 
2k6 3nv aok hc3 c0l ss4 041 11q 0hh 9d0 6fe biu 49b q4b ev  n1g fsv jw  h0k 46c bft 6id 9k1 0gi 1zx euh 7tu 6q5 5oz iir 3aw 2d7 n85 2z5 55p 400 7jw 6o7 1dz ekj 9u3 0yk bxv 63n hja 4li fmt tu  2me fbu 4ch qnh 6xg bww 02b 9z2 edk 9bc cjf 7ev a5a h99 2u4 3pt 
kd7 bho 0ir 1l2 dl  335 48x 5y0 anq 5aa 85  3ol m6c 10k c1v 7zn 71g k7o 96r 832 07at74  yo8 aap 529 47y f6d km  1c3 0fs bgn kk6 774 62t 199 0xq fln 1g  5h3 4ms 54j i2b f07 g5w 9lx 8i8 7km kme kbd 7dl 8f9 1ja o3n 35f aps 093j4br 5g2 zn  fco 03x 168 kz5 785 
49n q4n ez  f8s 0hd dgt 6fi biy cth jx0 0p5 1uu gaj 3nz 4e7 qh7 5ov 4j6 nb3 gnk 1zt e1l 70q 651 bfx 6ih dhu 0ge f7r 28b h0g 46o hjm 4le fmx 0q  917 0yg bxz 63b ji3 cek 1dv 0a6 n89 2z9 5qt 4t4 a5m h95 210 34p 0n7 1kw cjj 7ez 6xk b3s 02n dyv 2mi fby 4cd hel 
8x7 10g c1z 7zb ige 5am 89  fe0 26y 339 48t hzt 6gs 7b3 mj6 dfn dio 8og 7m2 6hr 525 47u 3x0 ka  fj1 78  5nl ihd 71k czs 9rv 8w6 1el 8i4 7ka cdq 54f i2n ft3 m2  3f2 1k  hkw in7 778 62x 195 85m 03t 164 6yq 789 ia6 hdv zb  3i3 b3  35j a4w 093fckp bn0 8f5 1jm 
8ax 9d8 6fm skm 49j q4j 27g f8w gan nm6 4e3 qh3 c0d jx4 049 11y 1zp e1h 70u 655 5or 4j2 nb7 gno f7v 28f h0c 46k jod 6il 9k9 0ga 913 0yc j5n 63f hji 4la ndd 0u  w35 g4e 55x 408 ji7 ceo 1dr 0a2 0n3 1ks cjn jf6 a5i h91 214 34t 2mm nke ai0 heh 6xo b3w 02j dyr 
any 5ai oil 3od 8x3 10c cuv 7zf 6gw 7b7 0iz dfj dd  3w5 48p 5y8 521 47q 3x4 ke  dik 8oc 7m6 6hv 71o czw 96z 8w2 fj5 s4  5nh aax 54b i2j ft7 m6  1eh 8i0 7ke cdu 7s4 6vt 191 0xy 3f6 1o  hks in3 4bz hdr zf  3i7 03p 160 6yu b2m ckt 7dd 8f1 1ji b7  35n a4s 093b
7hq 6m1 9od eil wu3 2x3 57v 426 hhg 4no for vs  9w5 8ru bzp 61h 6za b1y 00d 9x4 yr  nik 4an hgf a7g 58w 2w2 36z efm lj5 6b0 7gp c2j 7yr d   13w 2i0 3lp amm ha5 a14 hyd gp  n3a 0jn 9f6 6dc bks bdr 6kb 9i7 0eo f5x hq  h2m 44e hn4 abl 3cq 2f1 95n 096 7vs 6s3 
3d8 3a  5j5 4ou 752 60r d1o 0zw 1gf ehv 7ik koc 56l i0d 38a o8  g8p 3sh aru 59m ciz 7fj egw 1hg 0uv 1p6 kx3 b0c ph4 5e4 xh  3k9 fj  313 i96 qsv 6ey bji 0kt 1n4 eyu 12m c3p 7xh alw 5cg gbz 3mj 3bk 52  5lf acv 73a cxy 1yd 814 1a5 0du 7o8 6jx 5t7 4qw f4b ik  
wu7 2x7 57r 422 7hu 6m5 1fx 0c8 939 86y bzt 61l hhc 4nk fov vw  yv  nio 4aj hgb 6ze buu 0th 9x0 0l9 1iy 6b4 7gt a7c 58s 2w6 3rv 2i4 3lt 4g9 5by c2n 7yv 063 13s 0jj 9f2 6dg bkw a10 qrh gt  n3e fqt hu  h2i 44a bdv 6kf 9i3 0ek 1xz 092 7vw 6s7 5mx 4h8 3cu 2f5 
756 60v d1k 0zs fnl 3e  5j1 4oq 56h a9x 38e g7u 1gb ehr 7io kog rkn 7fn egs 1hc g8t 37d a6y 59i ic8 5e0 xl  fam 01z 1p2 kx7 b0g kf5 bjm 0kp 1n0 fn  317 i92 hxz als 5cc okf 3mn 8z9 12i c3t 7xl 73e k5m 94p 810 3bo 56  5lb acr 5t3 4qs f4f io  1a1 0dq bel ki4 
hho 4ng foz 2s  935 86u bzx 6uh 7hy 6m9 1ft 0c4 39s g6c 5sv 4v6 4y7 qt7 232 36r 0l5 1iu 6b8 7gx 6zi b1q 00l l6d yz  nic 4af hgn au4 hyl gx  n3i 0jf dev 6dk jbc 682 7yz l   1ww 2i8 3lx 4g5 5bu 5mt 4h4 3cy 2f9 1xv e3n 72s 673 bdz 6kj djw 0eg f5p hy  h2e 44m 
1gn 8k6 7ic cfs 56d a9t 38i o0  3d0 3i  hiu il5 7q2 60z d1g 87o 01v 146 rs3 b0k ic4 hft 2nq 3k1 g8x 37h a6u 59e cir 7fb 8d7 1ho 8z5 12e c3x b68 ieg 5co gbr 3mb fb  3u3 p26 hxv 6eq bja 8bd ddl dkm 8me 7o0 6jp 507 45w 3z2 ic  3bc q2  5ln ijf 73i cxq 1yl 8u4 
931 86q j7l 61d hhk 4nc nff 2w  39w g6g 57z 4v2 jk5 cgm 1fp 0c0 0l1 1iq chl jd4 4y3 qt3 236 36v 2oo nig 4ab hgj 6zm b1u 00h 9x8 0jb der 6do jbg a18 hyh 25e n3m gcl no4 4g1 5bq 686 jz6 h   1ws 1xr e3j 72w 677 5mp 4h0 07bdglm f5t g04 h2a 44i jmf 6kn djs 0ec 
5rh a9p 38m o4  1gj 8k2 7ig cfw 7q6 6tv d1c 87k 3d4 3m  5j9 4oy ic0 5e8 xd  3k5 01r 142 rs7 b0o civ 7ff 8d3 1hk o1d 37l a6q 59a iec 5ck gbv 3mf 8z1 12a cwt 7xd 6eu bje 0kx 1n8 ff  3u7 p22 hxr 503 45s 3z6 ig  1a9 0dy 7o4 6jt 73m cxu 1yh 818 3bg q6  5lj acz 
6zp b1h 00u 155 yc  3j2 ib7 hgw a7v 58f a2  36k 8e4 1il chq 7ga bb0 cgp 1fm 8j5 39j n3  57g a8w hhv im6 3e3 2j  d0d 86l 749 61y 7n3 6ks djn 8lf f5i o91 514 44t 5mm ike fi0 49  1xo 8t7 72j cyr cvs 7yc u   13f gcq 3la idd 5bl p35 hyu ga  308 8cg deo 6dr 7a2 
221 37q 4x4 qu4 cik je3 0m6 1hv 01o dzw c52 b0r aj5 hfm xy  fax fny 3p  hil 4od j6k 60c 926 0zf 1gw 0b7 7iz cfj 5ru 4w5 38p 2y8 3bz gmj 5lw 4i7 73p 660 1yu e2m dkt 0dd bey 6ji h3f 45n f4s iz  24b n2j at7 hxo 6eh bjx 0ke ddu 0s4 1vt 691 7xy 4f6 5cv gbk nn3 
yg  3j6 ib3 hgs 6zt b1l 00q 151 8e0 1ih chu 7ge a7r 58b a6  36o 39n n7  57c a8s 7hd cgt 1fi 8j1 dth 86h 7p5 6uu hhr 4nz 3e7 2n  f5m hd  510 44p 7n7 6kw djj 0ez 1xk 8t3 72n cyv 5mi aby 3cd p5  gcu 3le amx 5bh cvw 7yg q   13b 8cc dek 6dv 7a6 i89 5z9 ge  3t4 
cio je7 0m2 1hr 225 37u 4x0 59x aj1 hfi 2nl nhd 01k dzs c56 b0v j6o 60g 922 0zb nge 3t  hih ae0 56y 439 38t g7d 1gs 0b3 jj6 cfn 73t 664 1yq 089 na6 gmn 5ls 4i3 h3b 45j f4w g17 9h8 8mx jle 6jm 6el jcd 0ka 9g9 24f n2n at3 hxk 4f2 5cr gbo nn7 078 12x 695 s45 
asv 58n g9s 36c eft 1id chy 7gi 6zx buh 0tu 1q5 yk  nir 4aw 5d7 5k6 4nv fok 2b  d0l 86d 741 61q 7hh cgx 1fe eiu 39b g6r 57o i1g 5me abu 3ch 41  1xg 807 72b cyz bdk kh3 djf 0ev f5a hh  5u4 4pt i85 5z5 gi  300 0jw 1o7 6dz bkj c2s 7yk exv 13n gcy 3li amt 5bd 
01g 9y7 cq2 b0z xa5 hfe xq  fap 229 37y a6d 59t 6c3 7fs egn 9af 9ng eho 7ir 6l2 56u 435 38x 2y0 fnq 3x  hid 4ol j6c 60k 9v6 0zn 9h4 0dl beq 6ja h3n 45f fps ir  3br 2g2 ho7 aco 73x 668 94m 085 074 12t 699 7xq aln 01bg2h3 3ms fs  n2b a07 hxg co0 bjp 0km 9g5 
8e8 dc0 kae 7gm a7z 58j g9w 36g yo  niv 4as 5d3 ky4 b1d 00y 159 d0h 8rh 745 61u 5k2 4nr foo 2f  39f g6v 57k i1c 7hl knd 1fa 8j9 1xc 803 72f k4n 5ma abq 3cl 45  f5e hl  518 44x bdo kh7 djb 0er 0js 1o3 kg6 bkn i81 5z1 gm  304 oje 3lm amp yc8 c2w 7yo y   13j 
aj9 hfa xu  fat 01c 9y3 cq6 btv 6c7 7fw egj 1hz 2v5 3su 4x8 59p 56q 431 wt4 2y4 9nc ehk 7iv 6l6 j6g 60o 9v2 0zj fnu wt  qbh 4oh h3j 45b fpw iv  9h0 0dh beu 6je 7wt 6r4 1yy 081 3bv 2g6 ho3 ack alj 5cz 2h7 3mw 070 12p c3m 7xu 6ed bjt 0ki 9g1 fw  n2f a03 hxc 
356 bo  h8s 4zs bnl kb4 1j1 0oq 16h e9x 78e c7u 5gb ahr 3io oog 17  3fn ags 5hc c8t 77d 851 19i 8ih 1e0 km5 bam 41z 5p2 mn  f0g 7d  fjm 4kp 5n0 64w 717 83b d5j els 1cc kkf 7mn ayq 52i g3t 3xl 33e o5m yx8 a2x 7bo kdg 1lb ecr 1t3 0qs b4f r36 5a1 4dq fel 8e  
su7 6x7 17r 022 3hu 2m5 5fx 4c8 h9i a51 fzt cu  9b3 0nk bov cj6 6og jio 0aj 9m2 lt  fuu 4th h6h 4l9 5iy 2b4 3gt e7c 18s 6w6 7rv 6i4 7lt 0g9 1by g2n 3yv 463 53s 4jj hlb rv  fkw 82x 978 65m j3e bqt ct4 989 04a fdv 2kf hcc 4ek 5xz 492 3vw 2s7 1mx 0h8 7cu 6f5 
7d8 6ax 1j5 0ou 352 bk  h8w 4zw 5gf ahv 3ik ooc 16l m0d 78a c7q c8p 7sh 855 19m 13  3fj agw 5hg 4uv 5p6 mj  f0c 8il 1e4 6ny 7k9 64s 713 83f d5n sh  fji 4kt 5n4 ayu 52m k9  3xh elw 1cg cbz 7mj 7bk kdc 1lf ecv 33a d8  5yd avt 5a5 4du 3o8 8a  1t7 0qw b4b r32 
3hq 2m1 he4 ail su3 6x3 17v 026 9b7 0no bor cj2 h9m a55 fzp cq  lp  f1y 40d h6l 6oc jik 0an 9m6 e7g 18w 6w2 76z afm hj5 2b0 3gp g2j 3yr 467 53w 6i0 7lp emm 9ke 8vt 9s4 65i j3a 4jn hlf 6z  fks fdr 2kb hcg 4eo b5x c08 l2m 04e 9dd ebl 7cq 6f1 q46 496 3vs 2s3 
1rh e9p 78m csu 5gj ahz 3ig z6  3q6 bg  q3s iy3 7d4 6at 1j9 0oy mc0 1e8 6nu 7k5 41r 542 mf  f0o u7  3ff inc 5hk k1d 77l 859 19a 8o3 1ck cbv 7mf ayy 52a k5  3xd 7l  fje 4kx 5n8 6pw 7u7 83j d5b 103 05s 7z6 k86 5a9 4dy 3o4 8m  33m d4  5yh a2p 7bg cmw 1lj ecz 
h9a a59 n7l 21d das 0nc jff za6 79w c6g 17z 0v2 nk5 ggm 5fp 4c0 4l1 5iq ghl nd4 0y3 91c 636 76v 6oo jig 0ab dnr 2zm f1u 40h hrh 4jb hlj 6v  nbg 82p 970 65e j3m ccl jo4 0g1 1bq 286 nz6 4r3 5ws 5xr a3j 32w 277 1mp 0h0 03bdclm b5t c04 981 04i nmf 9w  hck 4ec 
5gn iaf 3ic z2  16d e9t 78i c7y 7d0 6ap liu 8fe 3q2 bc  q3w iy7 41v 546 mb  f0k 8id dol 6nq 7k1 c8x 77h 8q5 19e u3  3fb ing 5ho i4m 52e k1  f68 8o7 1co cbr 7mb 6ps 7u3 83n d5f 7h  fja ih4 hmt hbu ig5 3o0 8i  107 05w 7z2 k82 7bc cms 1ln mjf 33i d0  5yl a2t 
daw 0ng boz za2 h9e aq5 fzx cy  3hy 2m9 5ft 4c4 79s c6c 1sv 0v6 0y7 91g 632 76r 4l5 5iu 2b8 3gx lx  f1q 40l h6d 6ok jic 0af dnv 82t 974 65a j3i 4jf hln 6r  nbc 282 3yz 4r7 5ww 6i8 7lx 0g5 1bu 1mt 0h4 7cy 6f9 5xv a3n 32s 273 fdz 9s  hco 4eg b5p c00 985 04m 
gio ne7 4m2 5hr 625 77u 0x0 19x 8iy 9l9 6nl jhd 41k h7c g56 f0v n6o 20g h8b 4zb jge 6am 9c8 8fx 16y 039 78t c7d 5gs 4b3 nj6 gfn 33t 264 5yq 489 ja6 cmn 1ls 0i3 992 05j b4w c17 hbh an0 nle 8t  7u  ncd 4ka hmi 64f j2n 83s 963 0f2 1cr cbo jn7 478 52x 295 w45 
6ov 7j6 8hc dnk le  f1l 40q 551 afx 5ih t4  3ge 8p2 18b k0g 76o 79n crv 17c e8s 3hd ggt 5fi aiy h9x ix0 3p5 cd  daj 0nz 7e7 rh7 b5m k95 110 04p 3n7 9n  hcr 4ez 5xk a3s 32n e7  1mi 8a1 7cd clt ccu 7le 8n0 1bh j6  3yg axz 53b ii3 hls 6o  3a6 82i 1z9 6qt 7t4 
621 77q 0x4 90d gik ne3 4m6 5hv 41o h7g g52 f0r ej5 dou 6nh bax bny 6ai lil 0od n6k bz  h8f 4zf 5gw 4b7 3iz gfj 1ru 0w5 78p 6y8 7bz cmj 1lw 0i7 33p 260 5yu a2m hbl 4dd fey 8p  996 05n b4s c13 64b j2j 83w 967 7q  fjx 4ke hmm 4s4 5vt 291 3xy 0f6 1cv cbk jn3 
la  f1h 40u 555 6or 7j2 8hg dno 8p6 18f k0c 76k iod 5il 08  3ga fb0 ggp 5fm pkm 79j c6z 17g e8w dan 8gf 7e3 rh3 q2t ix4 349 21y 3n3 9j  hcv if6 b5i k91 114 04t 1mm 8a5 bi0 clp 5xo a3w 32j e3  j2  3yc i5n 53f ccq 7la 8n4 1bl 82m d4e 65x 708 ii7 hlw 6k  3a2 
8iq 9l1 6nd bat 41c h7k mw  ftv 2c7 3fw agj 5hz 6v5 7su 0x8 19p 16q 031 st4 6y4 hd3 ahk 3iv 2l6 n6g bv  h8j 4zj bnu 6ae 9c0 0oh l3j 05b bpw cu7 qih 4dh feu 2je 3wt 2r4 5yy 481 7bv 6g6 9ec eck elj 1cz 6h7 7mw 470 52p g3m 3xu su  fjt 4ki hma 64n j2f 8ws 9r3 
afp yh8 04  3gm 842 18j c9w 76g kl6 jiv 0as 1d3 lm  f1d 40y 559 h9p ix8 345 cl  1k2 0nr boo kc7 79f c6v 17k m1c 3hl ond 5fa aiq 5xc aws 32f o4n 1ma 8a9 7cl ked b5e r25 118 04x fdo 9f  hcz 4er 4js 5o3 6g  fkn 82a 1z1 65t 704 kje 7lm 8n8 9kx g2w 3yo axr 53j 
41g h7o ms  f0z 8iu 9l5 cd0 bap 629 77y e6d 19t 2c3 3fs agn hk6 hd7 aho 3ir 2l2 16u 035 78x 6y0 bnq 6aa 9c4 0ol n6c br  h8n 4zn hbd 4dl feq 8x  l3n 05f bps cu3 7br 6g2 9eg eco 33x 268 hz5 485 474 52t 299 3xq eln 9jf 6h3 7ms 64j j2b 8ww 9r7 7y  fjp 4km hme 
846 18n c9s 76c aft 5id 00  3gi li  fuh 4tu 5q5 6oz jir 0aw 1d7 1k6 0nv bok kc3 h9t ps4 341 ch  3hh ggx 5fe aiu 79b c6r 17o m1g 1me ebu 7ch clx 5xg aww 32b gyz fdk 9b  qhv 4ev b5a k99 1u4 0pt 82e 1z5 65p 700 4jw 5o7 6c  fkj g2s 3yk axv 53n ccy 7li emt 1bd 
31v 246 qs3 a0k jc4 col 1nq 0k1 d8x 07h b6u 69e qkb 4fb nng 2ho 5w  naf 4ic hok 66d b9t 08i 941 0d0 1ap kiu jl5 4q2 50z g1g ny7 gkm ng5 4o0 5jp 607 75w 0z2 92b 0bc dms 6ln jjf 43i h5a 2yl f2t n4m 22e q1h a68 jeg 6co dbr 0mb 1ps 0u3 s26 c5f 5eq aja nh4 gdl 
7y7 rt7 132 06r 3l5 2iu 5b8 4gx 5zi a1q 30l g5  1ok 8c3 7af cnv caw 7ng 8l2 9ir h4  fq5 azx 5uh 4hy 5m9 4m  3c4 09s d6c 6sv 7v6 6mt 7h4 0cy 1f9 ng  f3n 42s 573 adz 5kj v6  3eg 868 93x k2e 74m bu4 cpt 15a 899 3jf y7  5dk ibc 582 4yz 3r7 af  1i8 0lx 7g5 6bu 
jc0 6e8 1nu 0k5 31r 242 qs7 a0o qkf 4ff nnc 2hk l1d 07l b6q 69a 6rh b9p 08m 945 5s  fhz 4ig hoo 4q6 5tv g1c ny3 0d4 1at 6j9 7oy 603 75s 0z6 92f 2a9 3dy 4o4 5jt 43m h5e oy  f2p 0bg dmw 6lj bcz jec 6ck dbv 0mf fyy 22a q1l 4xd 5eu aje 3kx 2n8 1pw 0u7 s22 c5b 
3l1 2iq hat id4 7y3 rt3 136 06v 1oo 8c7 7ab cnr 5zm a1u 30h g1  h0  f59 i7l 51d cas 7nc 8l6 9iv 09w d6g 67z 7v2 ik5 hnu 4i  3c0 nc  f3j 42w 577 6mp 7h0 8je dlm 8r4 9wt k2a 74i imf 5kn v2  3ec 3jb y3  5do ibg b18 c4x 15e m3m dcl 8ed 7g1 6bq 586 iz6 3r3 ab  
d8p 0sh bru 69m qkj 4fj fgw 2hg 3uv 2p6 hx3 a0c sh4 6e4 1ny 0k9 0d8 1ax 6j5 7ou 452 50r g1o 3zw qw  fhv 4ik hoc 66l j0d 08a 949 0bk 9n3 6lf bcv 43a h5i ou  fvt 2a5 3du 4o8 5jx 6t7 7qw e4b 92j 14s 013 j96 c5n 5ey aji 3kt 2n4 fyu 22m quh 4xh blw 6cg 9a2 0mj 
5za a1y 30d o6l 1oc mik 7an kgf b7g 68w 1w2 06z ffm oj5 5b0 4gp 4hq 5m1 4e  fil 80c 1x3 67v 726 khg 7no eor 9iz g0u f55 azp 51h adr 5kb 26  3eo 860 93p k2m 74e kn4 bbl 0cq 1f1 no  396 4vs 5s3 q0z 4yr 367 an  1i0 0lp bmm ka5 b14 c4t 15i 891 3jn olf 5dc aks 
qkn 4fn fgs 2hc d8t 07d b6y 69i jc8 6e0 9ge eam 31z 2p2 hx7 a0g 456 50v g1k 3zs enl 9hd 6j1 7oq 66h b9x 08e 9p5 qs  fhr 4io hog 43e h5m oq  f2x 0bo 9n7 6lb bcr 6t3 7qs e4f 92n 2a1 3dq ael hi4 hf5 ajm 3kp 2n0 14w 017 j92 c5j bls 6cc 9a6 0mn fyq 22i q1d 4xl 
1og mio 7aj cnz 5ze auu 3th g9  3l9 2iy 5b4 4gt b7c 68s 1w6 0rv 80g 1x7 67r 722 4hu 5m5 4a  3c8 h8  f51 azt 51l khc 7nk eov dj6 864 93t k2i 74a adv 5kf 22  3ek nk  392 4vw 5s7 6mx 7h8 0cu 1f5 1i4 0lt 7g9 6by qtv 4yv 363 aj  3jj gez 5dg akw b10 c4p 15m 895 
5f  fho 4ir 5l2 66u 735 08x 1y0 8m9 1aa kid 7ol i6c 50k g1v 3zn 31g o7o 097ka0z 03atkfe 9gx 8b8 129 07y b6d 69t 5c3 4fs fgn ok6 374 22t 599 4xq bln 02bg1h3 0ms 14j 882 b07 c5w yd8 ajp 3km ome 35  3dl aeq 5ja k3n 75f 873 92s 0br 1g2 ko7 bco 43x 568 ol  385 
6k6 7nv eok 9ic g0l ws4 441 51q 4hh qeh pt  fiu 09b 9q2 67o j1g bsv 68n d9s 0   fft 2id haa 4gi 5zx auh 3tu 2q5 1oz mir 7aw 6d7 j85 6z5 15p 000 3jw 2o7 5dz akj q0c 4yk fxv aw  dcy 0li bmt 6bd 6me bbu 0ch 9o0 nv  fww 42b h4j adk hh3 gjf 3ev e5a 93i 6u4 7pt 
66q 731 81d 1y4 5b  fhk 4iv 5l6 i6g 50o g1r 3zj enu 1ae rbh 7oh bj9 coy 1nd eat 31c o7k 097oatv 5c7 4fw fgj 2hz 1v5 0su 7x8 69p blj 6cz 1h7 0mw 370 22p quu 4xu 5ed ajt 3ki x8  14n 886 b03 c5s k3j 75b 877 92w 31  3dh aeu 5je 4wt 5r4 oh  381 0bv 1g6 ko3 bck 
g0h nx8 445 51u 6k2 7nr eoo 9ig 09f 9q6 67k j1c 4hl hnd 4x  fiq ffp gc0 hae 4gm b7z 68j d9w 4   9ff miv 7as 6d3 hy4 a1d 30y 259 3js 2o3 hg6 akn j81 6z1 15t 004 lje 0lm bmp ch0 q0g 4yo fxr as  nr  fws 42f h4n 6ma bbq 0cl 9o4 e5e 93m 618 74x ado hh7 gjb 3er 
8m1 1ai kil 7od i6k 50c i7  3zf 5n  3b7 4iz hor 6ru 7w5 08p 1y8 121 07q 7x4 ru4 ybc ie3 3m6 2hv 31o f6  yz2 a0r bj5 cou 1nh 8b0 14b m2j bt7 cqw 5eh ajx 3ke x4  3s4 2vt 591 4xy 7f6 6cv dbk 8dc 0bz dmj 6lw 7i7 43p 560 od  f2m w5  3dd aey 5ji k3f 75n 8s3 9vs 
ab0 hnh 4t  wkm 09j 952 67g b8w can jm6 0e3 9ik g0d nx4 449 51y 5zp a1h 30u 255 1or 0j2 jb7 cno b7v 68f l0c 8   nod 2il hai 4ga q0k 4yc n5n 23f dcq 0la jdd 6bl s35 c4e 15x 008 ni7 geo 5dr 4a2 4n3 5ks gjn nf6 e5i 93a 614 74t 6mm jke 8jx 9o8 2xo f3w 42j h4b 
i6o 50g i3  3zb 8m5 1am kih be0 66y 739 08t d7d 5j  3b3 ij6 hov ybg ie7 3m2 2hr 125 07u 7x0 69x bj1 coq 1nl 8b4 31k f2  yz6 a0v 5el icd 3ka x0  14f m2n bt3 cqs 7f2 6cr dbo 8dg 378 22x 595 p45 43t 564 2yq 389 8kf dmn 6ls 7i3 k3b 75j 8s7 9vw 39  fn0 ile 5jm 
09n 956 67c b8s 4hd hnl 4p  fiy gth nx0 4p5 5uu caj 7nz 0e7 9io 1ov 0j6 jb3 cnk 5zt a1l 30q 251 ffx 2ih ham 4ge b7r 68b l0g 06o dcu 0le bmx 6bh q0o 4yg fxz 23b ni3 gek 5dv 4a6 j89 6z9 1qt 0t4 e5m 93e 610 74p 4n7 5kw gjj 3ez nz  f3s 42n h4f 6mi bby 0cd dlt 
b3k 6xs 176 02v 3h1 2mq het 00be092da5u 34h c1  1ko 8g7 7eb cjr ces 7jc 8h6 1dn l0  f19 i3l 55d io5 hju 0i  3g0 84o 187 63z 7r2 6ip 7l0 8ne dhm jc  3y2 46w 537 iif 5on r2  3ac 8v4 1zl k6a 70i b58 c0x 11e 8y5 3nb gar ya7 ifg q4v 49v 3v3 eb  dgl 8ad 7c1 6fq 
35r 202 h87 4z7 7dx 6a8 1ju 0o5 dxt 03l b2q 6yi hdn 4bf njc zz  1s  flz 4mg hko 6vh byx 0xe 905 ejd 1et 6n9 7ky 4u6 5pv g5c w23 2e9 nc1 4k4 5nt 643 71s e0n 96f 0fg diw 6hj bgz 47m h1e ky  f6p f9q dx  hzl 48l jac 6gk dfv 0if 1tw 0q7 7zz c1b 5au 4d5 3ox 2j8 
3h5 2mu 5f8 4cx b3o 6xw 172 02r 1kk 8g3 7ef cjv 09vha5q 34l c5  l4  fu5 i3h 5qh cew 7jg 8h2 1dj 84k 183 6wv 7r6 4ly 5i9 0m  3g4 jg  3y6 46s 533 6it 7l4 0gy 1b9 828 1zh k6e 70m iib 5oj r6  3ag 3nf gav ya3 ifc bq4 ctt 11a 8y1 1m8 0hx 7c5 6fu q4r 49r 3v7 ef  
jg4 ckl 1jq 0o1 35v 206 h83 4z3 hdj 4bb njg 2lo dxp 03h b2u 6ym 62d j4l 0xa 901 1w  nef 4mc hkk 4u2 54z g5g w27 mcx 1ep cdm jh5 647 71w e0j 96b gom nc5 4k0 5np 47i h1a 29d f6t 0fc dis 6hn jnf jag 6go dfr 0ib f9u 26e hzh 48h 5aq 4d1 nl4 oit 1ts 0q3 jy6 c1f 
092laqu 3ph c9  1kg edw 7ej cjz 793 r43 1s6 0vv 3h9 2my 5f4 4ct 4lu 5i5 0a  3g8 0yw d2o 63r 762 klc 7jk ekv 1df l8  f11 i3d 55l iin 5of 62  3ak 824 1zd k6i 70a 6ix 7l8 0gu 1b5 jk  f7b 4rw 5w7 5x6 pu6 323 ej  1m4 0ht 7c9 6fy b50 c0p 11m ezu 3nj 93  09hfaow 
l5l 03d b2y 6ya hdf 4bn fcs zr  35z 2t2 q37 a4g 7dp 6a0 9ce eem ejl 9ld 6n1 7kq 416 54v g5k n93 us  flr 4mo hkg 62h byp 0xm 9t5 0fo 9j7 6hb bgr 47e h1m kq  f6x 2e1 nc9 aal hm4 6p3 7us e0f 96n 10w 057 7zr c1j hb5 anm 3op 2j0 f9y dp  hzd 48d bhs 6gc 9e6 0in 
1kc eds 7en kcf 092ha5y 34d o2l fbm on5 5f0 4cp 797 r47 1s2 02z 0ys d2k 63v 766 4lq 5i1 0e  fml g4u f15 iwh 55h klg 7jo ekr 1db 820 97p k6m 70e iij 5ob 66  3ao jo  f7f 4rs 5w3 kj4 bfl 0gq 1b1 1m0 0hp bim ke5 5x2 49z 327 en  3nn 97  01azaos b54 c0t 11i 8y9 
hdb 4bj fcw zv  dxx 0wh bvu 6ye 7dt 6a4 1jy 0o9 3qv 2t6 q33 a4c 412 54r g5o n97 ejh 1ex 6n5 7ku 62l byt 0xi 909 uw  flv 4mk hkc 47a h1i ku  frt 0fk 9j3 6hf bgv 6p7 7uw e0b 96j 2e5 wh5 4k8 5nx 5ay 4d9 3ot 2j4 10s 053 7zv c1n bhw 6gg 9e2 0ij n0e dt  qqh a20 
6o2 7jr eko 9mg 2z0 n80 405 55u 4ll hjd 0x  fmq 0yn 9u6 63k bxs b3z 6xb 9z7 02g fbp gg0 hee 4cm q24 a5d 34y 219 9bf edn 7es cjc jx9 c0i 11t 044 3ns 2k3 hc6 aon q4g 49g f8z es  9d5 0hm bip cl0 6ia bfq 0gl 9k4 jr  fss 46f h0n iiw hl7 2d2 3ar e1e 97m 658 70x 
1b  flk 4mv 5h6 62q 771 0xt d3l eju 1ee cdx 7kh i2g 54o g5r f02 35c o3k 093oapv 7di cky 1jd eet 1r5 0wu 780 6yx 5g7 4bw fcj zk  330 di  5y5 pt5 bhj 6gz 1l7 0iw 10n m6f 7zk c1s 5ad ant 3oi 80  71  fj8 aau 5ne czz 71b 837 96w 0fv 1c6 kk3 bgk 4st 5v4 kh  3x9 
2z4 n84 401 55q 6o6 7jv ekk 9mc 0yj 9u2 63o bxw 4lh qah tt  fmu fbt 2md hea 4ci bwv 6xf 9z3 02c 1kz edj 7ew cjg h98 aqh 3pu 2u5 3nw 2k7 hc2 aoj ss5 c0m 11p 040 9d1 0hi bit 6fd q4c 49c n1f ew  jv  fsw 46b h0j 6ie bfu 0gh 9k0 e1a 1zy 6q4 7tt iis hl3 2d6 3av 
62u 775 0xp 198 1f  flo 4mr 5h2 i2c 54k g5v f06 8i9 1ea kmd 7kl 7dm kbe 9cx 8f8 35g o3o 093ka4z 5g3 4bs fcn zo  169 03y 784 kz4 bhn kd6 1l3 0is 334 dm  5y1 48y 09iaanp 3om 84  10j m6b 7zo c1w k7n 71f 833 96s 75  07auaaq 5na 47x 528 kl  f6e 0fr 1c2 kk7 bgo 
4ld hjl 0p  fmy 0yf 916 63c j5k cej 7jz 0a7 1dw 2z8 n88 4t5 5qu h94 a5l 34q 211 1kv 0n6 jf3 cjk b3r 6xj dyw 02o fbx 2mh hem 4ce q4o 49o f8r 27b dgu 0he bix 6fh jx1 c0a 1ut 0p4 nm3 gak qh6 4e6 4j7 5ow gnj 3az e1m 1zu 650 70p 6ii bfy 0gd dht jz  f7s 46n h0f 
8i5 1em cdp ba0 i2o 54g m3  ft2 1j  3f3 in6 hkv 62y 779 85l 194 165 03u 788 6yp hdw ia7 3i2 zc  35k b2  093ga4v 7da ckq 1jl 8f4 10f 8x6 7zc cus 5al igd 3oa 88  338 da  hzu 48u 7b2 6gr dfo mj7 8of din 6hs 7m3 47t 524 29y 3x1 79  fj0 ihe 5nm czr 71j 8w7 9rw 
0yb 912 63g j5o af0 hjh 0t  nde g4d w34 409 55y cen ji6 0a3 1ds 1kr 0n2 jf7 cjo h90 a5h 34u 215 nkd 2ml hei 4ca b3v 6xn dys 02k 9d9 0ha skl 6fl q4k 49k f8v 27f nm7 gao qh2 4e2 jx5 c0e 11x 048 e1i 1zq 654 70t 4j3 5os gnn nb6 28g f7w 46j h0b 6im joe 8nx 9k8 
i2k 54c m7  ft6 8i1 1ei cdt 7kd 6vu 7s5 0xx 190 1n  3f7 4mz hkr hds ia3 3i6 zg  161 03q b2l 6yt 7de cku 1jh 8f0 35o b6  093ca4r 5ah anx 3oe oim 10b 8x2 7zg cuw 7b6 6gv dfk mj3 3w4 de  5y9 48q 47p 520 kd  3x5 0fz dij 6hw 7m7 czv 71n 8w3 9rs s5  fj4 aay 5ni 
7ys c2k 13v e   3lq 2i1 ha4 aml hye a15 nwh gq  9f7 0jo bkr 6db 6kc bds 0en 9i6 hp  f5y 44d h2l abm hn5 2f0 3cp 097 95o 6s2 72z 6m0 7hp eim 9oe 2x2 39z 427 57w 4nn hhf 2z  fos 8rt 9w4 61i bzq b1x c48 9x5 00e nij ys  hgg 4ao 58v a7f 3rs 2w3 lj4 efl 7gq 6b1 
312 fk  qsw i97 bjh 6ex 1n5 0ku 12l eyt 7xi c3q 5cf alv 3mk okc 53  3bj acw 5lg cxx 7wh 815 1ye 0dt 1a4 6jy 7o9 4qv 5t6 ij  f4c wh  3d9 4ot 5j4 60s 753 0zv d1n ehw 1gg cfz 7ij i0e 56m o9  f20 37a g8q 59l art 7fk rkk 1hf egv 1p7 0uw b0b kx2 5e5 ph5 3k8 xi  
3lu 2i5 5bx 4g8 7yw c2o 13r a   9f3 0jk bkv 6df hya a11 n3d gu  ht  fqu 4ph h2h 6kg bdw 0ej 9i2 093 95k 6s6 7vv 4h9 5my 2f4 3ct 2x6 wu6 423 57s 6m4 7ht 0c9 1fy 86x 938 61m bzu 4nj hhb vv  fow nin yw  hgc 4ak but 6zd 9x1 00a 1ix 0l8 7gu 6b5 58r a7b 3rw 2w7 
bjl kf4 1n1 0kq 316 fo  qss i93 5cb alr 3mo okg 12h 8z8 7xm c3u k5l 73d 811 1ya 57  3bn acs 5lc 45z 5t2 in  f4g 0dp 1a0 ki5 bem 60w 757 0zr d1j 3d  fnm 4op 5j0 a9y 56i g7t 38d ehs 1gc kof 7in 7fo rko 1hb egr 37e g8u 59h a6x 5e1 ic9 fal xm  1p3 0us b0f kx6 
hym au5 n3h gy  dew 0jg bkz 6dj jz3 683 1wv m   3ly 2i9 5bt 4g4 4h5 5mu 2f8 3cx e3o 1xw 672 72r 6kk jmc 0ef djv hx  f5q 44l h2d 4nf hhn 2r  nfc 86t 934 61a bzy 6m8 7hx 0c5 1fu g6b 39r 4v7 5sw qt6 4y6 36s 233 1it 0l4 7gy 6b9 b1p 6zh l6e 00m nib 2oj hgo 4ag 
12d 8z4 7xa c3y 5cn ief 3mc gbs 3u2 fc  hxw p27 jcx 6ep ddm 8be 8md dkl 6jq 7o1 45v 506 ib  3z3 q3  3bb ijg 5lo cxp 73h 8u5 1ym 8k7 1go cfr 7ib a9u 56e o1  38h 3h  3d1 il4 hit 6ts 7q3 87n d1f 147 01w b0j rs2 hfu ic5 3k0 xa  37i g8y 59d a6t 7fc cis 1hn 8d6 
des 0jc jbf 6dn hyi a19 n3l 25d no5 gcm 5bp 4g0 jz7 687 13z i   e3k 1xs 676 72v 4h1 5mq gll 07beg05 f5u 44h hvh 6ko jmg 0eb djr 86p 930 61e j7m 4nb hhj 2v  nfg g6f 39v 4v3 5ss cgl jk4 0c1 1fq 1ip 0l0 jd5 chm 58z 4y2 36w 237 nif 2on hgk 4ac b1t 6zl 9x9 00i 
5cj alz 3mg gbw 1vh 8z0 7xe cwu bjd 6et 1n9 0ky 3u6 fg  hxs p23 45r 502 if  3z7 0dx 1a8 6ju 7o5 cxt 73l 819 1yi q7  3bf ijc 5lk a9q 56a o5  38l 8k3 1gk cfv 7if 6tw 7q7 0zz d1b 3l  3d5 4ox 5j8 5e9 ic1 3k4 xe  143 01s b0n rs6 7fg ciw 1hj 8d2 37m o1e y88 a6p 
6kr 7n2 8lg djo ha  f5h 44u 515 ikd 5ml 48  3ca 8t6 1xn cys 72k 7yb c2z 13g t   ff0 gcp 5bm ide hyt p34 309 25y den 8cf 7a3 6ds b1i 6zq 154 00t 3j3 yb  hgv ib6 58g a7w 36j a3  1im 8e5 bm0 chp cgq 7ha 8j4 1fl n2  39k a8v 57f im7 hhw 2k  3e2 86m d0e 61x 748 
gmk na3 4i6 5lv 661 73q e2l 1yt 0de dku 6jh bex 45o h3g g12 f4r n2k fz  hxn at6 bjy 6ei ddt 0kd 1vu 0s5 7xx 690 5cw 4f7 3mz gbj 37p 220 qu5 4x5 7fz cij 1hw 0m7 dzv 01n b0s c53 hfl aj4 fay xx  3q  fnx 4oe him 60b j6j 0zg 927 0b6 1gv cfk jj3 4w4 5rt 2y9 38q 
he  f5l 44q 511 6kv 7n6 8lc djk 8t2 1xj cyw 72o abx 5mh p4  3ce 3ld gct 5bi amy 7yf cvv 13c p   dej 0jz 7a7 6dw 5z8 i88 3t5 gd  3j7 yf  hgr 4az b1m 6zu 150 00p 1ii 8e1 7gd cht 58c a7s 36n a7  n6  39o a8r 57b cgu 7he 8j0 1fh 86i d0a 6ut 7p4 im3 hhs 2o  3e6 
665 73u 088 1yp gmo na7 4i2 5lr 45k h3c g16 f4v 0da 9h9 6jl jld jce 6em 9g8 8bx n2o 24g hxj at2 5cs 4f3 nn6 gbn 12y 079 s44 694 je6 cin 1hs 0m3 37t 224 59y 4x1 hfh aj0 nhe 2nm dzr 01j b0w c57 60f j6n 0zc 923 3u  ngd 4oa hii 438 56x g7e 38u 0b2 1gr cfo jj7 
abt 5md 40  3ci 806 1xf k4k 72c 6kz bdj 0ew djg hi  fqh 4pu 5u5 5z4 i84 301 gh  1o6 0jv bkk kg3 7yj c2r 13o exw 3lh gcx 5be amu 58o asw 36b g9r 1ie efu 7gh chx b1a 6zy 1q4 0tt nis yj  5d6 4av 4nw 5k7 2c  foj 86e d0m 61p 740 cgy 7hi eit 1fd g6s 39c i1f 57n 
0dm 9h5 zk8 bep 45g h3o is  f4z 2g3 3bs acn ho6 669 73y 084 94l 12u 075 7xp 698 01bfalo 3mr 2h2 n2c fr  hxf a06 bjq 6ea 9g4 0kl 9y6 01f bts cq3 hfd xa4 faq xp  37x 228 59u a6e 7fr 6c2 9ag ego ehn 9nf 6l3 7is 434 56t 2y1 38y 3y  fnp 4om hie 60j j6b 0zo 9v7 
802 1xb k4o 72g abp yl8 44  3cm hm  f5d 44y 519 kh6 bdn 0es djc 1o2 0jr bko kg7 5z0 i80 305 gl  3ll ojd 5ba amq 7yn c2v 13k x   1ia 8e9 7gl kad 58k ass 36f g9v niw yn  5d2 4ar b1e ky5 158 00x 86a d0i 61t 744 4ns 5k3 2g  fon g6w 39g a8z 57j kne 7hm 8j8 9ox 
45c h3k iw  fpv 0di 9h1 6jd bet 6r5 7wu 080 1yx 2g7 3bw acj 5lz 01bbalk 3mv 2h6 12q 071 7xt c3l bju 6ee 9g0 0kh n2g fv  hxb a02 qmh aj8 fau xt  9y2 01b btw cq7 7fv 6c6 9ac egk 3st 2v4 59q 4x9 430 56p 2y5 wt5 ehj 1gz 6l7 7iw 60n j6f 0zk 9v3 wu  fnt 4oi hia 
]]
-- END generated

local fmt, find, match, gmatch, sub, byte, concat, sort, floor, call, sha1hex, unpk
local bxor, band, lshift, rshift
local function bind()
  fmt, find, match, gmatch, sub, byte = string.format, string.find, string.match, string.gmatch, string.sub, string.byte
  concat, sort, floor = table.concat, table.sort, math.floor
  call, sha1hex, unpk = redis.call, redis.sha1hex, unpack
  bxor, band, lshift, rshift = bit.bxor, bit.band, bit.lshift, bit.rshift
end

-- Redis Cluster's CRC-16 (XMODEM) of each byte value, made on first use (a fifth of a ms, which
-- the engine's apply never pays: only the JSON door and transfer check slots).
local CRC16
local function crc16_table()
  CRC16 = {}
  for i = 0, 255 do
    local c = i * 256
    for _ = 1, 8 do
      c = band(c, 0x8000) ~= 0 and bxor(band(lshift(c, 1), 0xffff), 0x1021) or band(lshift(c, 1), 0xffff)
    end
    CRC16[i + 1] = c
  end
end

-- The slot of hash tag s, as CLUSTER KEYSLOT gives it, and that slot's tag.
local function slot_tag(s)
  if not CRC16 then crc16_table() end
  local crc = 0
  for i = 1, #s do
    crc = bxor(band(lshift(crc, 8), 0xffff), CRC16[bxor(rshift(crc, 8), byte(s, i)) + 1])
  end
  local slot = crc % 16384
  local at = floor(slot / 64) * 257 + (slot % 64) * 4 + 1
  return slot, match(sub(SLOT_TAGS, at, at + 3), '^[0-9a-z]+')
end

-- "<n>:" for every byte length n a digest term usually has, made once: the digest's encoding
-- then costs a table lookup per term, not a string.format. (".." prints these small integers
-- exactly; rule 5 is about amounts, which may pass 14 digits.)
local LENS = {}
for n = 0, 2047 do LENS[n] = n .. ':' end
-- The milliseconds of TIME's microseconds, 0 to 999: MS['<n>'] is n, MS[n] its three digits
-- ("000" to "999"), so the event's ts is TIME's seconds and these, not a string.format. (One
-- table: apply is at Lua's limit of 60 upvalues.)
local MS = {}
for n = 0, 999 do
  MS[n] = (n < 10 and '00' or n < 100 and '0' or '') .. n
  MS[n .. ''] = n
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
local hld, hld_order                 -- hold -> {legs, cpns, exp, was_exp, open, new, takes, counted}
local nmv                            -- movements in the op under way
-- The event's ops as JSON text, in pieces: ev[1 .. ne]. The table lives as long as the library,
-- so a call fills it without making it or growing it again (what lies past ne is stale).
local ev, ne = {}, 0
-- The same for the result's JSON (RB), the idempotency record (KB) and the HSET (HS).
local RB, rn, KB, kn, HS, hn = {}, 0, {}, 0, {}, 0
-- What few ops need, per call (nil until one does): incoming, per asset or leg, the credits check
-- has let through; lanes, the lane count open or set_lanes writes (text); hist, the lanes_hist
-- set_lanes writes. (One table: apply is at Lua's limit of 60 upvalues.)
local rare

local NONE = {} -- an empty list, never written
-- Text that JSON need not escape, without the stored hold's separators ("|", ",", "=": a name
-- holding one would read back as other coupons or legs). Anchored, so one match walks the text
-- once (an unanchored search of the characters to escape starts a match at every position).
local SAFE = '^[^%c"\\|,=]*$'

-- An idempotency ttl: a positive integer as Redis reads one (string2ll: no sign, no leading zero).
local IDEM_TTL = '^[1-9]%d*$'

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

-- An asset's code as the engine's registry writes them: [A-Z0-9_]{1,16}.
local function asset_code(a) return #a <= 16 and find(a, '^[A-Z0-9_]+$') ~= nil end
-- A hold's ttl (ms): at most the longest the engine takes (digits are checked with the op).
local function long_ttl(ms)
  local n = tonumber(ms)
  return n ~= nil and n > SHARED.max_ttl
end
-- settle's and release's leg: an asset, "points", or none (the whole hold), which takes no amount.
local function bad_leg(a, amt)
  if a == '' then return amt ~= '0' end
  return a ~= 'points' and not asset_code(a)
end

-- The fields each op names, by op (a, h, c: asset or leg, hold, coupon or other hold); an op
-- whose asset, leg or ttl (amt, ms: its units and ms as text) is not one answers true
-- (malformed: apply writes nothing).
local NAMES = {
  credit = function(a) want_leg(a); return not asset_code(a) end,
  debit = function(a) want_leg(a); return not asset_code(a) end,
  freeze = function(a, h, _, _, ms) want_leg(a); want('h:' .. h); return not asset_code(a) or long_ttl(ms) end,
  freeze_points = function(_, h, _, _, ms) want_leg('points'); want('h:' .. h); return long_ttl(ms) end,
  lock_coupon = function(_, h, c, _, ms) want('h:' .. h); want('c:' .. c); return long_ttl(ms) end,
  settle = function(a, h, _, amt) want('h:' .. h); want_leg(a); return bad_leg(a, amt) end,
  release = function(a, h, _, amt) want('h:' .. h); want_leg(a); return bad_leg(a, amt) end,
  earn_points = function() want_leg('points') end,
  spend_points = function() want_leg('points') end,
  grant_coupon = function(_, _, c) want('c:' .. c) end,
  redeem_coupon = function(_, _, c) want('c:' .. c) end,
  take = function(_, h, c) want('h:' .. h); want('h:' .. c) end,
  give = function(a, h, c) want('h:' .. h); want('h:' .. c); want_leg(a) end,
  close = function(_, h, _, amt) want('h:' .. h); return amt ~= '0' and amt ~= '1' end,
  check = function(a, h) want('h:' .. h); want_leg(a) end,
  restore = function(a, h) want('h:' .. h); want_leg(a); return h == '' or a ~= 'points' and not asset_code(a) end,
  set_lanes = function() want('lanes'); want('lanes_hist') end,
}

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
    v = {legs = {}, cpns = {}, exp = 0, was_exp = false, open = false, new = false, takes = 0}
    local s = get('h:' .. h)
    if s then
      local exp, legs, cs, takes = match(s, '^(%d+)|([^|]*)|([^|]*)|?(%d*)$')
      v.exp, v.was_exp, v.open, v.takes = tonumber(exp), tonumber(exp), true, tonumber(takes) or 0
      for a, n in gmatch(legs, '([^,=]+)=(%d+)') do v.legs[a] = tonumber(n) end
      for c in gmatch(cs, '[^,]+') do v.cpns[#v.cpns + 1] = c end
    end
    hld[h] = v
    hld_order[#hld_order + 1] = h
  end
  return v
end
-- The names of hold v's legs, in order.
local function leg_names(v)
  local ls = {}
  for a in pairs(v.legs) do ls[#ls + 1] = a end
  sort(ls)
  return ls
end

local function encode_hold(v)
  local one = next(v.legs)
  local legs = ''
  if one and next(v.legs, one) == nil then
    legs = one .. '=' .. fmt('%d', v.legs[one]) -- one leg, the usual hold: no lists to sort
  elseif one then
    local ls = {}
    for j, a in ipairs(leg_names(v)) do ls[j] = a .. '=' .. fmt('%d', v.legs[a]) end
    legs = concat(ls, ',')
  end
  local cs = v.cpns
  return fmt('%d', v.exp) .. '|' .. legs .. '|' .. (#cs == 0 and '' or #cs == 1 and cs[1] or concat(cs, ',')) ..
    (v.takes > 0 and '|' .. fmt('%d', v.takes) or '')
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

-- A hold closes once it holds nothing and no undecided transfer has taken from it: the one
-- that aborts gives back into it.
local function close_if_empty(v)
  if next(v.legs) == nil and #v.cpns == 0 and v.takes == 0 then v.open = false end
end

-- A transfer's step counts itself once on each order hold, however many of its ops name it.
local function count_take(v, by)
  if not v.counted then
    v.counted = true
    v.takes = v.takes + by > 0 and v.takes + by or 0
  end
end

-- settle (to = 'cp') and release (to = 'avail'). A release with a non-zero exp (the sweeper's)
-- applies only to the hold of that expiry: a hold of the same name opened since is another.
local function unhold(h, leg, amt, to, exp)
  local v = hold(h)
  if not v.open or (exp > 0 and v.exp ~= exp) then return 'HOLD_NOT_FOUND' end
  if to == 'cp' and v.exp > 0 and now >= v.exp then return 'HOLD_EXPIRED' end
  if leg == '' then
    for _, a in ipairs(leg_names(v)) do
      local code, detail = take_leg(v, a, v.legs[a], to)
      if code then return code, detail end
    end
    for _, c in ipairs(v.cpns) do
      local cv = coupon(c)
      set_coupon(c, to == 'cp' and 'used' or 'available', cv and cv.exp or 0)
    end
    v.cpns = {}
    v.takes = 0 -- the whole hold, a cancel: closed, what a transfer took goes to available if it aborts
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
-- A lane count: digits, SHARED.min_lanes .. SHARED.max_lanes, as text without leading zeros.
local function lane_count(amt)
  local n = units(amt)
  if not n or n < SHARED.min_lanes or n > SHARED.max_lanes then return nil end
  return n, fmt('%d', n)
end
local LANES_RANGE = 'lanes must be an integer in ' .. SHARED.min_lanes .. ' .. ' .. SHARED.max_lanes

-- open: with units, a hot holder of that many lanes.
function OPS.open(_, amt)
  if status then return 'HOLDER_EXISTS' end
  if amt ~= '0' then
    local n, text = lane_count(amt)
    if not n then return 'INVALID_INSTRUCTION', LANES_RANGE end
    rare = rare or {}
    rare.lanes = text
  end
  status = 'active'
end
-- set_lanes: the holder's lanes raised to amt, never lowered; the same count changes nothing
-- (the instruction applies all the same). A raise keeps the count it ends, with the server time,
-- in lanes_hist, with the entries of earlier raises still within the call's idempotency ttl: an
-- id applied under an earlier count may come back as long as its record lives, and the engine
-- looks for it in the lane that count gave it.
function OPS.set_lanes(_, amt)
  local n, text = lane_count(amt)
  if not n then return 'INVALID_INSTRUCTION', LANES_RANGE end
  local cur = rare and rare.lanes or get('lanes') or '1'
  local c = tonumber(cur) or 1
  if n < c then
    return 'INVALID_INSTRUCTION', 'lanes ' .. text .. ' would lower ' .. cur .. ': a hot holder\'s lanes are raised, never lowered'
  end
  if n == c then return end
  rare = rare or {}
  local keep, ttl = {}, tonumber(ttl_ok)
  for entry, ms in gmatch(rare.hist or get('lanes_hist') or '', '(%d+@(%d+);)') do
    if tonumber(ms) + ttl > now then keep[#keep + 1] = entry end
  end
  keep[#keep + 1] = cur .. '@' .. fmt('%d', now) .. ';'
  rare.lanes, rare.hist = text, concat(keep)
end
function OPS.suspend() status = 'suspended' end
function OPS.resume() status = 'active' end
-- check: a transfer part's prepare opens the transfer's hold h (a part that only receives leaves
-- it empty: its commit consumes it all the same, so that a commit run twice fails HOLD_NOT_FOUND
-- rather than credit twice), and checks that the credit its commit will make of amt of a fits,
-- with the call's earlier checks of a (rare.incoming).
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
  rare = rare or {}
  rare.incoming = rare.incoming or {}
  local total = (rare.incoming[a] or 0) + n
  if have + total > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', have) end
  rare.incoming[a] = total
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
-- instruction creates; the funds stay frozen. h stays open even when emptied, counting the
-- transfer until its abort gives back into it or its commit closes it (count_take).
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
  count_take(v, 1)
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
    count_take(w, -1)
  end
  close_if_empty(v)
end
-- restore: n of leg a back from the counterparty into hold h while it is open, else to available:
-- what a one-payer transfer's payer settled from h, given back when the payee cannot take it.
function OPS.restore(a, amt, h)
  local n = units(amt)
  if not n then return 'INVALID_AMOUNT' end
  local v = hold(h)
  local to = v.open and 'frozen' or 'avail'
  if a == 'points' then
    points()
    local have = v.open and pf or pa
    if have + n > MAX then return 'OVERFLOW', 'points:' .. fmt('%d', have) end
    if v.open then pf = pf + n else pa = pa + n end
  else
    asset(a)
    local have = v.open and frz[a] or bal[a]
    if have + n > MAX then return 'OVERFLOW', a .. ':' .. fmt('%d', have) end
    if v.open then frz[a] = frz[a] + n else bal[a] = bal[a] + n end
  end
  if v.open then v.legs[a] = (v.legs[a] or 0) + n end
  move(a, 'cp', to, n, amt)
end
-- close: units 1 when the part settled the whole hold, which then closes whatever other
-- transfers took from it, as a settle of the whole hold by an instruction does: what an aborted
-- one gave back into it before this commit goes to available, as it would have after it (a leg
-- that would pass 2^53-1 there stays held, the hold open: a commit cannot be refused).
function OPS.close(_, amt, h)
  local v = hold(h)
  if not v.open then return end
  count_take(v, -1)
  if amt == '1' then
    v.takes = 0
    for _, a in ipairs(leg_names(v)) do take_leg(v, a, v.legs[a], 'avail') end
  end
  close_if_empty(v)
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
  local holder, id, fp, idem_ttl, cp, memo, xfer, route = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7],
    argv[8]
  local nfp, fixed, per_op = SHARED.record_fp, SHARED.args_fixed, SHARED.args_per_op
  local fpk = sub(fp, 1, nfp)

  -- Idempotency: the same id always gets the same outcome.
  local rec = call('GET', K_TX)
  if rec then
    if sub(rec, 1, nfp) ~= fpk then return {0, 'err\nIDEMPOTENCY_CONFLICT\n-1\n'} end
    if byte(rec, 33) == 10 and byte(rec, 20) ~= 10 then
      -- Written by key format 1 ("<fp>\n<outcome>"), before an upgrade; gone within the TTL.
      if sub(rec, 1, 32) ~= fp then return {0, 'err\nIDEMPOTENCY_CONFLICT\n-1\n'} end
      return {1, sub(rec, 34)}
    end
    if byte(rec, nfp + 1) == 101 then return {1, sub(rec, nfp + 1)} end -- 101: "e", a rejection
    return {1, 'ok\n' .. sub(rec, nfp + 1)}
  end

  -- stage: argument checks, TIME, field list, one HMGET
  local nargs = #argv
  local nops = (nargs - fixed) / per_op
  -- The ttl reaches SET ... PX, after the first write: it must be an integer as Redis reads one
  -- (no leading zero). It is nearly always the one of the call before (Lua strings are
  -- interned: == compares pointers), which spares its pattern match. Four distinct keys: a
  -- key given twice would be written as two types (a stream, then a hash), failing after the
  -- first write.
  if nops < 1 or nops > SHARED.max_ops or nops ~= floor(nops) or #fp < nfp or (idem_ttl ~= ttl_ok and
      (#idem_ttl > 15 or not find(idem_ttl, IDEM_TTL))) or K == K_TX or K == K_OUT or K == K_EXP or
      K_TX == K_OUT or K_TX == K_EXP or K_OUT == K_EXP then
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
  local msn = MS[m]
  now = sec_ms + msn
  ts = sec .. MS[msn]

  for j = 4, nn do fields[fields[j]] = nil end
  nn = 3
  -- The op arguments go into the event's and the result's JSON as they are: none may need
  -- escaping. (The engine sends only ids, asset codes and digits; this keeps a direct caller
  -- from writing an event the ledger could not read, or a hold that reads back as another:
  -- SAFE. The op is a key of NAMES or OPS, the ms digits, or the op is refused.) They are
  -- checked together, with one search: a search costs several times what the concatenation does.
  local text, bad_args = '', false
  for b = fixed + 1, nargs, per_op do
    local a, amt, h, c, ms = argv[b + 1], argv[b + 2], argv[b + 3], argv[b + 4], argv[b + 5]
    text = text .. a .. amt .. h .. c
    local f = NAMES[argv[b]]
    -- ms: digits within 2^53-1, where Lua's numbers stop being exact.
    if f and f(a, h, c, amt, ms) or ms ~= '0' and not (#ms < 16 or #ms == 16 and ms <= '9007199254740991') then
      bad_args = true
    end
  end
  if bad_args or not find(text, SAFE) then
    return {0, 'err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments'}
  end
  if route ~= '' and not fields.lanes then
    nn = nn + 1
    fields[nn], fields.lanes = 'lanes', nn
  end
  raw = call('HMGET', K, unpk(fields, 1, nn))
  -- stage: op loop: checks, event ops JSON
  status = raw[1] or nil
  local existed, status0 = status ~= nil, status
  -- Routed by a count the holder no longer has (or not yet has): the engine reads the count
  -- and routes again. Not recorded: the id has not been judged.
  if route ~= '' and existed and route ~= (raw[fields.lanes] or '1') then
    return {0, 'err\nLANES_CHANGED\n-1\n' .. (raw[fields.lanes] or '1')}
  end
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
  ne, nmv, rare = 0, 0, nil

  for i = 0, nops - 1 do
    local b = fixed + 1 + i * per_op
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
    elseif status == 'suspended' and REFUSED_SUSPENDED[op] then code = 'HOLDER_SUSPENDED'
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
      local sweep = SHARED.sweep_prefix
      if existed and sub(id, 1, #sweep) ~= sweep then call('SET', K_TX, fpk .. out, 'PX', idem_ttl) end
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
  if rare and rare.lanes then hn = hn + 1; HS[hn] = 'lanes'; hn = hn + 1; HS[hn] = rare.lanes end
  if rare and rare.hist then hn = hn + 1; HS[hn] = 'lanes_hist'; hn = hn + 1; HS[hn] = rare.hist end

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

-- The record's fields the transfer function reads, in the order of its reply (record_reply),
-- then the claim; REC_AT gives each one's place.
local REC_FIELDS = {'status', 'fp', 'err', 'done', 'created_ms', 'deadline_ms', 'holders', 'finished', 'payer',
  'until_ms', 'ttl_ms', XFER_CLAIM}
local REC_AT = {}
for i = 1, #REC_FIELDS do REC_AT[REC_FIELDS[i]] = i end

-- read_record reads the transfer's record at key k: a field the record lacks is taken from its
-- claim (a one-payer transfer's, written by the engine in one field), and a record with a claim
-- and no status of its own is preparing. The body, last in the claim, is not read here.
local function read_record(k)
  local r = call('HMGET', k, unpk(REC_FIELDS))
  local c = r[#REC_FIELDS]
  if not c then return r end
  local at = 1
  for j = 1, #XFER_CLAIM_FIELDS - 1 do
    local e = find(c, '\n', at, true)
    if not e then break end
    local i = REC_AT[XFER_CLAIM_FIELDS[j]]
    if not r[i] then r[i] = sub(c, at, e - 1) end
    at = e + 1
  end
  if not r[1] then r[1] = 'preparing' end
  return r
end

-- The transfer function's reply, from the record's fields r.
local function record_reply(outcome, r)
  return {outcome, r[1] or '', r[3] or '', r[4] or '', r[5] or '', r[6] or '', r[7] or '', r[8] or '',
    r[9] or '', r[10] or '', r[11] or ''}
end

-- An id, hold or coupon name: [A-Za-z0-9_.:-]{1,64}, not dots alone.
local function valid_id(s)
  return type(s) == 'string' and #s >= 1 and #s <= 64 and find(s, '^[%w_.:-]+$') ~= nil
    and find(s, '^%.+$') == nil
end

-- A count, index or ms argument: digits as Redis writes an integer (no leading zero), since
-- some are stored as they are given.
local function ms_arg(s)
  if not s or #s > 15 or not (s == '0' or find(s, IDEM_TTL)) then error('bad ms argument') end
  return tonumber(s)
end

-- The number of parts of a record's holders (their names, comma separated).
local function count_parts(holders)
  local n, at = 1, 1
  while true do
    local c = find(holders, ',', at, true)
    if not c then return n end
    n, at = n + 1, c + 1
  end
end

-- finish_args checks finish's arguments at argv[i] (ttl (ms), the number of parts, part
-- indexes) as text, before the record is read; an error when one is not.
local function finish_args(argv, i)
  local ttl, n = ms_arg(argv[i]), ms_arg(argv[i + 1])
  if ttl < 1 or n < MIN_PARTS or n > MAX_PARTS then error('bad ttl or count argument') end
  for j = i + 2, #argv do
    if ms_arg(argv[j]) >= n then error('bad part argument') end
  end
end

-- finished_with gives record r's finished string with the parts of finish's arguments at
-- argv[i] marked, and the ttl; or nil and an error when the count is not the record's parts
-- (a finish of fewer would make it done with parts never sent; of more, never done).
local function finished_with(r, argv, i)
  local ttl, n = ms_arg(argv[i]), ms_arg(argv[i + 1])
  if not r[7] or n ~= count_parts(r[7]) or (r[8] and #r[8] ~= n) then
    return nil, 'ERR the count argument is not the number of the record\'s parts'
  end
  local f = r[8] or string.rep('0', n)
  for j = i + 2, #argv do
    local k = ms_arg(argv[j])
    f = sub(f, 1, k) .. '1' .. sub(f, k + 2)
  end
  return f, ttl
end

local function transfer(keys, argv)
  if not fmt then bind() end
  local K_REC, K_IDX = keys[1], keys[2]
  local action, id = argv[1], argv[2]
  -- The record is the transfer's, and the index its slot's: a key of another kind would be
  -- written in part (the record fails its HSET after the index's ZADD).
  -- An id has no braces: the record's hash tag is then the whole "x:<id>".
  local ok = #keys == 2 and valid_id(id) and #id <= MAX_TRANSFER_ID and match(K_REC, '^{x:(.*)}$') == id
  if ok then
    local _, tag = slot_tag(sub(K_REC, 2, -2))
    ok = K_IDX == '{' .. tag .. '}' .. KEY_TRANSFERS
  end
  if not ok then return redis.error_reply('ERR bad keys: the transfer\'s record and the index of its slot') end
  -- The arguments as text before the record is read: a malformed call is refused whether the
  -- record exists or not.
  if action == 'decide' then
    local to, err = argv[3], argv[4]
    if (to ~= 'committed' and to ~= 'aborted') or not err then return redis.error_reply('ERR bad status argument') end
    ms_arg(argv[5])
    if argv[6] then finish_args(argv, 6) end
  elseif action == 'finish' then
    finish_args(argv, 3)
  elseif action ~= 'begin' and action ~= 'read' then
    return redis.error_reply('ERR unknown action')
  end
  local t = call('TIME')
  local tnow = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
  local r = read_record(K_REC)

  if action == 'begin' then
    local fp, body, timeout, holders = argv[3], argv[4], ms_arg(argv[5]), argv[6]
    if not holders then return redis.error_reply('ERR missing begin arguments') end
    if r[1] then
      if r[2] ~= fp then return record_reply('conflict', r) end
      return record_reply('found', r)
    end
    local deadline, created = fmt('%d', tnow + timeout), fmt('%d', tnow)
    local payer, until_ms, ttl = argv[7] or '', '', argv[9] or ''
    -- checked before the first write
    local parts = count_parts(holders)
    if parts < MIN_PARTS or parts > MAX_PARTS then return redis.error_reply('ERR bad holders argument') end
    if payer ~= '' then
      if ms_arg(payer) >= parts then return redis.error_reply('ERR bad payer argument') end
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
    -- Every check before the first write; then the index once (first: a key of another type
    -- there fails before anything is written), the record in one HSET.
    local fields, due, fin = {}, nil, 3
    if action == 'decide' then
      local to, err, retry = argv[3], argv[4], ms_arg(argv[5])
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
    if ttl and r[4] then
      call('ZREM', K_IDX, id)
      call('PEXPIRE', K_REC, fmt('%d', ttl))
    elseif due then
      call('ZADD', K_IDX, due, id)
    end
    if #fields > 0 then call('HSET', K_REC, unpk(fields)) end
    return record_reply('found', r)
  end
end

-- The JSON door: apply_json decodes one JSON instruction, checks what the Go engine checks before
-- Redis, and hands apply the same flat arguments the engine would send, so the same handlers,
-- checks, idempotency, event and digest follow. Nothing is written when a check here fails.

local function bad(code, i, msg)
  return {0, 'err\n' .. code .. '\n' .. fmt('%d', i) .. '\n' .. msg}
end

-- valid_utf8: UTF-8 without overlong forms, surrogates or values past U+10FFFF.
local function valid_utf8(s)
  if not find(s, '[\128-\255]') then return true end
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

-- valid_memo: at most SHARED.max_memo bytes of UTF-8, no control characters.
local function valid_memo(s)
  return #s <= SHARED.max_memo and not find(s, '%c') and valid_utf8(s)
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

-- A literal of JSON's grammar: true, false, null, or a number (no '+', no leading zero, digits
-- on both sides of a point); whole: a number without fraction or exponent.
local function json_literal(t)
  if t == 'true' or t == 'false' or t == 'null' then return true, false end
  local int, rest = match(t, '^-?(%d+)(.*)$')
  if not int or (#int > 1 and byte(int) == 48) then return false end
  if rest == '' then return true, true end
  rest = match(rest, '^%.%d+(.*)$') or rest
  return rest == '' or find(rest, '^[eE][+-]?%d+$') ~= nil, false
end

-- scan reads a JSON text that cjson has accepted. cjson reads numbers with strtod, so it also
-- takes hex, '+', leading zeros, '5.', inf and nan, whitespace JSON does not have, and raw
-- control characters in strings: scan refuses every token outside the strings that is not a
-- literal of JSON and a raw control character in a string, as the engine's decoder does. It counts the
-- keys the text has (the strings followed by a colon): cjson keeps the last of two equal keys;
-- the engine refuses an instruction whose meaning depends on which one wins, and so does this
-- door. Gives the count, or nil and what is wrong; and, when a ttl_ms, expires_ms or lanes is
-- not a whole number as JSON writes one (cjson reads 1e3 and 1.0 as 1000 and 1), the place of
-- the first such among the keys of those names in the text (1 for the first), and its key:
-- the engine refuses it with its op's shape, and so does apply_json, at the op that holds it.
local function scan(text)
  local n, i, key, named, frac, frac_key = 0, 1, nil, 0, nil, nil
  while true do
    local s = find(text, '"', i, true) or #text + 1
    local a, b = find(text, '[^ \t\n\r{}%[%],:]+', i)
    while a and a < s do
      local t = sub(text, a, b)
      local ok, whole = json_literal(t)
      if not ok then return nil, 'not JSON: ' .. sub(t, 1, 40) end
      if key and not whole and t ~= 'null' and not frac then frac, frac_key = named, key end
      key = nil
      a, b = find(text, '[^ \t\n\r{}%[%],:]+', b + 1)
    end
    if s > #text then return n, frac, frac_key end
    local j = s + 1
    -- To the string's closing quote, over escapes (JSON has no raw control character in one).
    while true do
      local q = find(text, '["\\%z\1-\31]', j)
      if not q then return n, frac, frac_key end
      local c = byte(text, q)
      if c < 32 then return nil, 'a control character in a string: escape it' end
      if c == 92 then j = q + 2 else j = q; break end
    end
    key = nil
    if find(text, '^[ \t\n\r]*:', j + 1) then
      n = n + 1
      key = sub(text, s + 1, j - 1)
      if find(key, '\\', 1, true) then key = cjson.decode('"' .. key .. '"') end
      if WHOLE_KEYS[key] then named = named + 1 else key = nil end
    end
    i = j + 1
  end
end

-- The keys of every object in v, at any depth (cjson bounds the depth), or those of them that
-- only keeps: with no only, equal to the keys the text has unless one was given twice. Counted
-- at every depth, so that a value that is an object where a string belongs (an amount) gets the
-- code of that field's check, as in the engine.
local function all_keys(v, only)
  local n = 0
  for k, x in pairs(v) do
    if type(k) == 'string' and (not only or only[k]) then n = n + 1 end
    if type(x) == 'table' then n = n + all_keys(x, only) end
  end
  return n
end

-- What the engine's decoder refuses in op o, at index i, before any op is judged further: an op
-- that is no object, an unknown field, a field null or empty (an empty leg would read as the whole
-- hold), a field of the wrong JSON type, an amount that is not a string (null included:
-- INVALID_AMOUNT). nil, or the error reply.
local function json_shape(o, i)
  if not object(o) then return bad('INVALID_INSTRUCTION', i, 'op must be an object') end
  for k in pairs(o) do
    if not JSON_OP_KEYS[k] then return bad('INVALID_INSTRUCTION', i, 'unknown field "' .. sub(k, 1, 64) .. '"') end
  end
  for _, f in ipairs(JSON_FIELDS) do
    local v = o[f]
    if v == '' or (v == cjson.null and f ~= 'amount') then
      return bad('INVALID_INSTRUCTION', i, 'field "' .. f .. '" is ' .. (v == '' and 'empty' or 'null') .. ': leave it out')
    end
    if v ~= nil and f ~= 'amount' and type(v) ~= ((f == 'ttl_ms' or f == 'expires_ms' or f == 'lanes') and 'number' or 'string') then
      return bad('INVALID_INSTRUCTION', i, f .. ' has the wrong type')
    end
  end
  if o.amount ~= nil and type(o.amount) ~= 'string' then
    return bad('INVALID_AMOUNT', i, 'amount must be a string of digits, 1 .. 2^53-1 minor units')
  end
end

-- The flat arguments of one op whose shape json_shape took, or nil and the error reply.
local function json_op(o, i, out)
  local op = o.op
  local spec = type(op) == 'string' and JSON_OPS[op]
  if not spec then return nil, bad('INVALID_INSTRUCTION', i, 'unknown op') end
  for _, f in ipairs(JSON_FIELDS) do
    local v = o[f]
    if spec[f] == true and v == nil then return nil, bad('INVALID_INSTRUCTION', i, op .. ' needs ' .. f) end
    if spec[f] == nil and v ~= nil then return nil, bad('INVALID_INSTRUCTION', i, op .. ' takes no ' .. f) end
  end
  if o.amount and not o.leg and (op == 'settle' or op == 'release') then
    return nil, bad('INVALID_INSTRUCTION', i, op .. ' with an amount needs a leg')
  end
  if o.hold and not valid_id(o.hold) then return nil, bad('INVALID_ID', i, 'hold must match [A-Za-z0-9_.:-]{1,64}') end
  if o.coupon and not valid_id(o.coupon) then return nil, bad('INVALID_ID', i, 'coupon must match [A-Za-z0-9_.:-]{1,64}') end
  local x = SHARED.transfer_prefix
  if o.hold and sub(o.hold, 1, #x) == x then
    return nil, bad('INVALID_ID', i, 'hold: names beginning with "' .. x .. '" are the holds of transfers')
  end
  local a = o.leg or o.asset or ''
  if a ~= '' and not (find(a, '^[A-Z0-9_]+$') and #a <= 16) and not (a == 'points' and o.leg) then
    return nil, bad('UNKNOWN_ASSET', i, 'asset must match [A-Z0-9_]{1,16} (or a leg "points")')
  end
  local amt = '0'
  if o.amount ~= nil then
    -- Leading zeros are taken, as the engine takes them, within its 40 digits.
    local n = #o.amount <= 40 and units(match(o.amount, '^0*(.*)$'))
    if not n then return nil, bad('INVALID_AMOUNT', i, 'amount must be a string of digits, 1 .. 2^53-1 minor units') end
    amt = fmt('%d', n)
  end
  local ms, lim = o.ttl_ms or o.expires_ms, o.ttl_ms and SHARED.max_ttl or MAX
  if ms ~= nil then
    if ms ~= ms or ms < 1 or ms > lim or ms ~= floor(ms) then
      return nil, bad('INVALID_INSTRUCTION', i, (o.ttl_ms and 'ttl_ms' or 'expires_ms') .. ' must be an integer in 1 .. ' .. fmt('%d', lim))
    end
    ms = fmt('%d', ms)
  end
  local lanes = o.lanes
  if lanes ~= nil then
    if lanes ~= lanes or lanes < SHARED.min_lanes or lanes > SHARED.max_lanes or lanes ~= floor(lanes) then
      return nil, bad('INVALID_INSTRUCTION', i, LANES_RANGE)
    end
    amt = fmt('%d', lanes) -- open and set_lanes have no amount: the lanes travel as the units
  end
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5], out[n + 6] =
    op, a, amt, o.hold or '', o.coupon or '', ms or '0'
  return true
end

local function apply_json(keys, argv)
  if not fmt then bind() end
  local text, ttl = argv[1], argv[2] or SHARED.default_idem_ttl
  if #keys ~= 4 or not text or #argv > 2 then
    return bad('INVALID_INSTRUCTION', -1, 'FCALL apply_json 4 <holder> <record> <outbox> <expiry> <json> [ttl ms]')
  end
  if #ttl > 15 or not find(ttl, IDEM_TTL) then
    return bad('INVALID_INSTRUCTION', -1, 'the idempotency ttl must be a whole number of ms, 1 or more, without leading zeros')
  end
  if #text > SHARED.max_payload then
    return bad('INVALID_INSTRUCTION', -1, fmt('instruction over %d KiB', SHARED.max_payload / 1024))
  end
  if not valid_utf8(text) then return bad('INVALID_INSTRUCTION', -1, 'not UTF-8') end
  local ok, in_ = pcall(cjson.decode, text)
  -- cjson decodes [] as it does {}: the text must open an object.
  if not ok or not object(in_) or not find(text, '^%s*{') then return bad('INVALID_INSTRUCTION', -1, 'not a JSON object') end
  local nkeys, frac, frac_key = scan(text)
  if not nkeys then return bad('INVALID_INSTRUCTION', -1, frac) end
  if nkeys ~= all_keys(in_) then return bad('INVALID_INSTRUCTION', -1, 'a key given twice') end
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
  local nops, count = type(ops) == 'table' and #ops or 0, 0
  if type(ops) == 'table' then for _ in pairs(ops) do count = count + 1 end end
  if ops ~= nil and ops ~= cjson.null and (type(ops) ~= 'table' or count ~= nops) then
    return bad('INVALID_INSTRUCTION', -1, fmt('ops must be a list of 1 to %d ops', SHARED.max_ops))
  end
  -- In the engine's order: the instruction's shape, every op's shape, then what they say.
  if cp == '' then return bad('INVALID_ID', -1, 'counterparty must match [A-Za-z0-9_.:-]{1,64}') end
  local named = 0 -- the keys that scan counted for frac, in the ops so far
  for i = 1, nops do
    local reply = json_shape(ops[i], i - 1)
    if reply then return reply end
    named = named + all_keys(ops[i], WHOLE_KEYS)
    if frac and frac <= named then return bad('INVALID_INSTRUCTION', i - 1, frac_key .. ' must be a whole number') end
  end
  if frac then return bad('INVALID_INSTRUCTION', -1, frac_key .. ' must be a whole number') end
  if cp == nil then cp = SHARED.default_counterparty end -- left out; given, an id like the others
  if not valid_id(id) then return bad('INVALID_ID', -1, 'id must match [A-Za-z0-9_.:-]{1,64}') end
  if not valid_id(holder) then return bad('INVALID_ID', -1, 'holder must match [A-Za-z0-9_.:-]{1,64}') end
  if not valid_id(cp) then return bad('INVALID_ID', -1, 'counterparty must match [A-Za-z0-9_.:-]{1,64}') end
  if not valid_memo(memo) then
    return bad('INVALID_INSTRUCTION', -1,
      fmt('memo must be UTF-8 of at most %d bytes without control characters', SHARED.max_memo))
  end
  if nops == 0 then
    return bad('INVALID_INSTRUCTION', -1, fmt('ops must be a list of 1 to %d ops', SHARED.max_ops))
  end
  if nops > SHARED.max_ops then return bad('TOO_MANY_OPS', -1, fmt('%d ops, at most %d', nops, SHARED.max_ops)) end
  -- The caller names the keys, and each must be the contract's: another holder's hash would
  -- take the instruction, a record under another spelling would apply the id once per
  -- spelling, and an outbox or expiry index of another tag (even one in the same slot) would
  -- hold events the relay never reads and holds the sweeper never sees.
  if match(keys[1], '^{h:(.*)}$') ~= holder then
    return bad('INVALID_INSTRUCTION', -1, 'KEYS[1] must be {h:' .. holder .. '}, the hash of holder ' .. holder)
  end
  local slot, tag = slot_tag(sub(keys[1], 2, -2))
  local want = {keys[1] .. KEY_TX .. id, '{' .. tag .. '}' .. KEY_OUTBOX, '{' .. tag .. '}' .. KEY_EXPIRY}
  for k = 1, 3 do
    if keys[k + 1] ~= want[k] then
      return bad('INVALID_INSTRUCTION', -1, fmt('KEYS[%d] must be %s, the %s of holder %s and slot %d', k + 1, want[k],
        k == 1 and 'idempotency record of instruction ' .. id or k == 2 and 'outbox' or 'expiry index', holder, slot))
    end
  end
  local flat = {holder, id, sha1hex(text), ttl, cp, memo, '', ''}
  for i = 1, nops do
    local done, reply = json_op(ops[i], i - 1, flat)
    if not done then return reply end
  end
  -- Ids of the engine's own steps: a client may not take them first.
  local x, sweep = SHARED.transfer_prefix, SHARED.sweep_prefix
  if sub(id, 1, #x) == x then return bad('INVALID_ID', -1, 'id: names beginning with "' .. x .. '" are those of transfers') end
  if sub(cp, 1, #x) == x then return bad('INVALID_ID', -1, 'counterparty: names beginning with "' .. x .. '" are those of transfers') end
  if sub(id, 1, #sweep) == sweep then return bad('INVALID_ID', -1, 'id: names beginning with "' .. sweep .. '" are the sweeper\'s') end
  -- A credit of a hot holder goes to the lane its id picks, which only the engine computes: this
  -- door sends credits checked as a plain holder's, and a hot holder refuses them (were it to
  -- take one on lane 0, the same id sent through the engine would apply again on its lane).
  -- Lanes are opened and raised by the engine alone, before lane 0 says their count, which this
  -- door cannot do (they live in other slots): lane 0 raised alone would let two engines route
  -- one credit by two counts to two lanes.
  local credits = true
  for i = 0, nops - 1 do
    local at = SHARED.args_fixed + i * SHARED.args_per_op
    local op = flat[at + 1]
    if op == 'set_lanes' or op == 'open' and flat[at + 3] ~= '0' then
      return bad('INVALID_INSTRUCTION', i, op .. ' with lanes: a hot holder\'s lanes are opened and raised by the engine, '
        .. 'in their own slots before this one: send it through the engine')
    end
    credits = credits and (op == 'credit' or op == 'earn_points')
  end
  if credits then flat[8] = '1' end
  local reply = apply(keys, flat, true)
  local lanes = match(reply[2], '^err\nLANES_CHANGED\n%-1\n(%d+)$')
  if lanes then
    return bad('INVALID_INSTRUCTION', -1, 'holder ' .. holder .. ' is hot (' .. lanes .. ' lanes): its credits go to the lane '
      .. 'their id picks, which only the engine computes: send them through the engine')
  end
  return reply
end

redis.register_function('apply', apply)
redis.register_function('transfer', transfer)
redis.register_function('apply_json', apply_json)
