package redisfrontier

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/frontier"
)

// The Lua scripts. Every script gets KEYS[1] = the shard's state hash
// ("<prefix>{<tag>}:g") and builds every other key from the same prefix, so
// all keys a script touches share the shard's hash tag (one Cluster slot).
// Time is the Redis server's TIME in microseconds, the one clock of the
// fleet.
//
// Common ARGV:
//
//	1 crawl id (the state hash's id; a mismatch means the state was lost)
//	2 lease in µs (items and in-flight slots)
//	3 slot ids to release first, space-separated (releases ride on the
//	  worker's next call)
//	4 worker id (prefix of lease ids)
//	5 wake-up channel
//	6 drop counts decided locally, "outcome:count ..." (added to stats)
//
// Script-specific arguments start at ARGV[7].
//
// Keys under prefix P = "<prefix>{<tag>}:" — u is a unit: a host with
// its www/apex twin folded in (see unitOf), the unit of politeness:
//
//	P..g            hash  shard state: id, limits, counters, slowdown latch
//	P..u:<u>        hash  unit: site limits, counters, gate times, seen-set shape
//	P..q:<u>:<d>    list  queued entries of u at depth d, "url\0from"
//	P..s:<u>:<b>    set   seen URL hashes of u, bucket b (intsets)
//	P..ready        zset  units with queued items that may take another, by
//	                      when they may start (µs)
//	P..out          zset  item leases by expiry; P..lease hash id -> "u\0d\0entry"
//	P..slots        zset  in-flight slots by expiry; P..slot hash id -> u
//	P..units        set   every unit (for Stats)
//	P..stopped      set   stopped hosts
//	P..robots:<a>   hash  robots.txt entry of authority a; P..rlock:<a> its fetch lock
const prelude = `
local G = KEYS[1]
local P = string.sub(G, 1, #G - 1)
-- A key that never exists: on a master whose slot is migrating away, a
-- script may not touch a missing key of the slot, and this one fails here,
-- before any write, rather than halfway (the call is retried; see
-- retryable).
redis.call('EXISTS', P .. 'absent')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
if redis.call('HGET', G, 'id') ~= ARGV[1] then return {'LOST'} end
local LEASE = tonumber(ARGV[2])
-- wake: publish a wake-up ('w') for every waiter (a slot freed, a lock
-- released...); wakeN: publish 'n', which wakes Next's waiters too,
-- because a URL may be handed out sooner than they were told.
local wake, wakeN = false, false
local function num(x) return tonumber(x) or 0 end
local gs = redis.call('HMGET', G, 'maxif', 'gap', 'slowed', 'sdif', 'sdgap', 'startwin')
local MAXIF, GAP = num(gs[1]), num(gs[2])
local SLOWED = gs[3] == '1'
local SDIF, SDGAP = num(gs[4]), num(gs[5])
local SW = num(gs[6])
if SLOWED then
  if MAXIF == 0 or MAXIF > SDIF then MAXIF = SDIF end
  if GAP < SDGAP then GAP = SDGAP end
end
-- spaced is the distance kept between admissions for a gap g: g plus the
-- start window, the longest a worker may take from its admission to
-- sending, so that the requests themselves are g apart.
local function spaced(g)
  if g > 0 then return g + SW end
  return 0
end
local GAPS = spaced(GAP)
local function ukey(u) return P .. 'u:' .. u end

-- ulimits returns a unit's effective in-flight limit and admission
-- spacing (its gap, spaced).
local function ulimits(hif, hgap, slowed)
  hif, hgap = num(hif), num(hgap)
  if SLOWED or slowed == '1' then
    if hif > SDIF then hif = SDIF end
    if hgap < SDGAP then hgap = SDGAP end
  end
  return hif, spaced(hgap)
end

-- ready puts u in, out of, or at its place in the ready schedule. Only a
-- unit that becomes ready sooner than before wakes Next's waiters: one
-- pushed later, or removed, changes nothing they wait for.
local function ready(u)
  local v = redis.call('HMGET', ukey(u), 'queued', 'out', 'hif', 'hgap', 'slowed', 'last', 'lasth')
  local hif, hgap = ulimits(v[3], v[4], v[5])
  if num(v[1]) > 0 and num(v[2]) < hif then
    local at = math.max(num(v[6]), num(v[7])) + hgap
    local old = redis.call('ZSCORE', P .. 'ready', u)
    if not old or at < tonumber(old) then wakeN = true end
    redis.call('ZADD', P .. 'ready', at, u)
  else
    redis.call('ZREM', P .. 'ready', u)
  end
end

-- push queues entry e ("url\0from") of unit u at depth d.
local function push(u, d, e, front)
  local K = ukey(u)
  local q = P .. 'q:' .. u .. ':' .. d
  if front then redis.call('LPUSH', q, e) else redis.call('RPUSH', q, e) end
  local v = redis.call('HMGET', K, 'queued', 'mind', 'maxd')
  if num(v[1]) == 0 or v[2] == false or d < num(v[2]) then redis.call('HSET', K, 'mind', d) end
  if d > num(v[3]) then redis.call('HSET', K, 'maxd', d) end
  redis.call('HINCRBY', K, 'queued', 1)
  redis.call('HINCRBY', G, 'queued', 1)
  ready(u)
end

-- split3 splits "a\0b\0rest".
local function split3(s)
  local i = string.find(s, '\0', 1, true)
  local j = string.find(s, '\0', i + 1, true)
  return string.sub(s, 1, i - 1), string.sub(s, i + 1, j - 1), string.sub(s, j + 1)
end

local function reap()
  local exp = redis.call('ZRANGEBYSCORE', P .. 'out', '-inf', now, 'LIMIT', 0, 64)
  for _, id in ipairs(exp) do
    local data = redis.call('HGET', P .. 'lease', id)
    redis.call('ZREM', P .. 'out', id)
    redis.call('HDEL', P .. 'lease', id)
    if data then
      local u, d, e = split3(data)
      redis.call('HINCRBY', ukey(u), 'out', -1)
      redis.call('HINCRBY', ukey(u), 'rehanded', 1)
      redis.call('HINCRBY', G, 'out', -1)
      redis.call('HINCRBY', G, 'rehanded', 1)
      push(u, tonumber(d), e, true)
    end
  end
  local sl = redis.call('ZRANGEBYSCORE', P .. 'slots', '-inf', now, 'LIMIT', 0, 64)
  for _, id in ipairs(sl) do
    local u = redis.call('HGET', P .. 'slot', id)
    redis.call('ZREM', P .. 'slots', id)
    redis.call('HDEL', P .. 'slot', id)
    if u then
      redis.call('HINCRBY', ukey(u), 'inflight', -1)
      redis.call('HINCRBY', G, 'inflight', -1)
      redis.call('HINCRBY', G, 'slotsexpired', 1)
      wake = true
      if MAXIF > 0 then wakeN = true end
    end
  end
end

-- release frees in-flight slots. Only a site that was at its in-flight
-- limit, or a run-wide limit, can have a request waiting for the slot:
-- other releases wake nobody (a PUBLISH reaches every node of a cluster).
local function release(ids)
  for id in string.gmatch(ids, '%S+') do
    local u = redis.call('HGET', P .. 'slot', id)
    if u then
      redis.call('ZREM', P .. 'slots', id)
      redis.call('HDEL', P .. 'slot', id)
      local v = redis.call('HMGET', ukey(u), 'inflight', 'hif', 'slowed')
      if num(v[1]) >= ulimits(v[2], 0, v[3]) then wake = true end
      redis.call('HINCRBY', ukey(u), 'inflight', -1)
      redis.call('HINCRBY', G, 'inflight', -1)
      if MAXIF > 0 then wake, wakeN = true, true end
    end
  end
end

-- expwait is the time until the earliest lease or slot expiry, the next
-- moment a crashed worker's share comes back; 0 when nothing is leased.
local function expwait()
  local w = 0
  for _, z in ipairs({'out', 'slots'}) do
    local a = redis.call('ZRANGE', P .. z, 0, 0, 'WITHSCORES')
    if a[2] then
      local x = tonumber(a[2]) - now
      if x < 1 then x = 1 end
      if w == 0 or x < w then w = x end
    end
  end
  return w
end

-- fence returns the moment from which every admission of the shard must
-- keep its gaps anew because the master serving it changed (a replica
-- promoted, a restart): admissions the old master made in its last
-- moments may not have reached this one, so this one cannot know when
-- those requests started. 0 while the master is the one that made them.
local function fence()
  local rid = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
  local v = redis.call('HMGET', G, 'node', 'fence')
  if v[1] == rid then return num(v[2]) end
  if v[1] == false then
    redis.call('HSET', G, 'node', rid)
    return num(v[2])
  end
  redis.call('HSET', G, 'node', rid, 'fence', now)
  redis.call('HINCRBY', G, 'fences', 1)
  return now
end

local function finish(res)
  if wakeN then
    redis.call('PUBLISH', ARGV[5], 'n')
  elseif wake then
    redis.call('PUBLISH', ARGV[5], 'w')
  end
  return res
end

for code, n in string.gmatch(ARGV[6], '(%d+):(%d+)') do
  redis.call('HINCRBY', G, 'drop:' .. code, tonumber(n))
end
reap()
release(ARGV[3])
`

// nextScript hands out the item of the unit that may start soonest.
// Reply: {'ITEM', lease, unit, depth, entry, next} (next: µs until the
// next item may be handed out, 0 until woken, -1 now) | {'WAIT', µs (0: until woken)}
// | {'DONE', pushes} | {'LOST'}.
const nextScript = `
-- avail says whether an item may be handed out now: 'GO' with the unit,
-- 'WAIT' with µs (0: until woken), or 'DONE' with the push count.
local function avail()
  local g = redis.call('HMGET', G, 'queued', 'out', 'inflight', 'last', 'lasth', 'pushes')
  if num(g[1]) == 0 then
    if num(g[2]) == 0 then return 'DONE', num(g[6]) end
    return 'WAIT', expwait()
  end
  if MAXIF > 0 and (num(g[2]) >= MAXIF or num(g[3]) >= MAXIF) then return 'WAIT', expwait() end
  local top = redis.call('ZRANGE', P .. 'ready', 0, 0, 'WITHSCORES')
  if not top[1] then return 'WAIT', expwait() end
  local at = math.max(math.max(num(g[4]), num(g[5])) + GAPS, tonumber(top[2]))
  if at > now then return 'WAIT', at - now end
  return 'GO', top[1]
end
local st, x = avail()
if st ~= 'GO' then return finish({st, x}) end
local u = x
local K = ukey(u)
local v = redis.call('HMGET', K, 'mind', 'maxd')
local d, maxd = num(v[1]), num(v[2])
local e
while d <= maxd do
  e = redis.call('LPOP', P .. 'q:' .. u .. ':' .. d)
  if e then break end
  d = d + 1
end
if not e then
  -- The counts say queued but the lists are empty: repair, never spin.
  local q = num(redis.call('HGET', K, 'queued'))
  redis.call('HSET', K, 'queued', 0)
  redis.call('HINCRBY', G, 'queued', -q)
  ready(u)
  return finish({'WAIT', 1})
end
local id = ARGV[4] .. ':' .. redis.call('HINCRBY', G, 'seq', 1)
redis.call('ZADD', P .. 'out', now + LEASE, id)
redis.call('HSET', P .. 'lease', id, u .. '\0' .. d .. '\0' .. e)
redis.call('HSET', K, 'mind', d, 'lasth', now)
redis.call('HINCRBY', K, 'queued', -1)
redis.call('HINCRBY', K, 'out', 1)
redis.call('HSET', G, 'lasth', now)
redis.call('HINCRBY', G, 'queued', -1)
redis.call('HINCRBY', G, 'out', 1)
ready(u)
-- When the next item may go, so that the worker's other fetchers wait
-- without asking (-1: now).
local st2, w = avail()
if st2 == 'GO' then w = -1 end
return finish({'ITEM', id, u, d, e, w})
`

// acquireScript admits one request to a unit. ARGV[7] unit, [8] slot id,
// [9] default in-flight limit, [10] default gap (for units of no site).
// Reply: {'OK', start µs} | {'WAIT', µs} | {'LOST'}.
const acquireScript = `
local u = ARGV[7]
local K = ukey(u)
local v = redis.call('HMGET', K, 'inflight', 'hif', 'hgap', 'slowed', 'last')
if not v[2] then
  redis.call('HSET', K, 'hif', ARGV[9], 'hgap', ARGV[10])
  redis.call('SADD', P .. 'units', u)
  v[2], v[3] = ARGV[9], ARGV[10]
end
-- A retry of a call whose reply was lost (a failover) admits nothing
-- twice: the slot is in already.
if redis.call('HEXISTS', P .. 'slot', ARGV[8]) == 1 then return finish({'OK', num(v[5])}) end
local hif, hgap = ulimits(v[2], v[3], v[4])
local g = redis.call('HMGET', G, 'inflight', 'last')
if num(v[1]) >= hif or (MAXIF > 0 and num(g[1]) >= MAXIF) then return finish({'WAIT', expwait()}) end
local F = fence()
local at = math.max(math.max(num(g[2]), F) + GAPS, math.max(num(v[5]), F) + hgap)
if at > now then return finish({'WAIT', at - now}) end
redis.call('ZADD', P .. 'slots', now + LEASE, ARGV[8])
redis.call('HSET', P .. 'slot', ARGV[8], u)
redis.call('HINCRBY', K, 'inflight', 1)
redis.call('HINCRBY', K, 'requests', 1)
redis.call('HSET', K, 'last', now)
redis.call('HINCRBY', G, 'inflight', 1)
redis.call('HINCRBY', G, 'requests', 1)
redis.call('HSET', G, 'last', now)
ready(u)
return finish({'OK', now})
`

// readmitScript admits again a request that holds its in-flight slot but
// could not start within the start window of its admission: the gaps
// alone, no slot (the request's own is still counted). ARGV[7] unit, [8]
// default in-flight limit, [9] default gap (for units of no site).
// Reply: {'OK', start µs} | {'WAIT', µs} | {'LOST'}.
const readmitScript = `
local u = ARGV[7]
local K = ukey(u)
local v = redis.call('HMGET', K, 'hif', 'hgap', 'slowed', 'last')
if not v[1] then
  redis.call('HSET', K, 'hif', ARGV[8], 'hgap', ARGV[9])
  redis.call('SADD', P .. 'units', u)
  v[1], v[2] = ARGV[8], ARGV[9]
end
local _, hgap = ulimits(v[1], v[2], v[3])
local F = fence()
local at = math.max(math.max(num(redis.call('HGET', G, 'last')), F) + GAPS, math.max(num(v[4]), F) + hgap)
if at > now then return finish({'WAIT', at - now}) end
redis.call('HSET', K, 'last', now)
redis.call('HINCRBY', K, 'readmits', 1)
redis.call('HSET', G, 'last', now)
redis.call('HINCRBY', G, 'readmits', 1)
ready(u)
return finish({'OK', now})
`

// lateScript records a start that happened later than its admission
// allowed (its worker stalled between its last check and the write): a
// start now, for the unit and the run, so later admissions keep their
// distance from it. ARGV[7] unit. Reply: {'OK', now µs} | {'LOST'}.
const lateScript = `
local u = ARGV[7]
local K = ukey(u)
if num(redis.call('HGET', K, 'last')) < now then redis.call('HSET', K, 'last', now) end
if num(redis.call('HGET', G, 'last')) < now then redis.call('HSET', G, 'last', now) end
redis.call('HINCRBY', K, 'latestarts', 1)
redis.call('HINCRBY', G, 'latestarts', 1)
ready(u)
return finish({'OK', now})
`

// seenLib is the seen set of a unit, shared by the update and claim
// scripts; format it with the bucket modulus (1<<lowBits).
const seenLib = `
local LOWMOD = %d
local ALPHA = num(redis.call('HGET', G, 'alpha'))
if ALPHA < 1 then ALPHA = 200 end

-- low returns the low bits (mod LOWMOD) of a two's-complement int64 given
-- in decimal, exactly (Lua numbers are doubles).
local function low(s)
  local neg = string.byte(s, 1) == 45
  local r = 0
  for i = (neg and 2 or 1), #s do r = (r * 10 + string.byte(s, i) - 48) %% LOWMOD end
  if neg and r ~= 0 then r = LOWMOD - r end
  return r
end

-- seen adds hash h (low bits lb) to u's seen set and reports whether it
-- is new. The set is split in buckets by linear hashing, each bucket
-- staying small enough for Redis's compact intset encoding.
local function seen(u, K, h, lb)
  local s = redis.call('HMGET', K, 'sl', 'sp', 'sn')
  local L, p, n = num(s[1]), num(s[2]), num(s[3])
  local m = 2 ^ L
  local b = lb %% m
  if b < p then b = lb %% (2 * m) end
  if redis.call('SADD', P .. 's:' .. u .. ':' .. b, h) == 0 then return false end
  n = n + 1
  if n > ALPHA * (m + p) then
    local src = P .. 's:' .. u .. ':' .. p
    local dst = P .. 's:' .. u .. ':' .. (p + m)
    local mv = {}
    for _, x in ipairs(redis.call('SMEMBERS', src)) do
      if low(x) %% (2 * m) ~= p then mv[#mv + 1] = x end
    end
    for i = 1, #mv, 1000 do
      local j = math.min(i + 999, #mv)
      redis.call('SREM', src, unpack(mv, i, j))
      redis.call('SADD', dst, unpack(mv, i, j))
    end
    p = p + 1
    if p == m then L, p = L + 1, 0 end
    redis.call('HSET', K, 'sl', L, 'sp', p, 'sn', n)
  else
    redis.call('HSET', K, 'sn', n)
  end
  return true
end
`

// updateScript adds URLs and then, optionally, finishes an item: the links
// of a page and its Done in one call. ARGV[7] done lease id (” for none),
// [8] '1' if the item failed, [9] number of URLs, then 8 fields per URL:
// unit, host, url, depth, from, hash (int64 decimal), hash low bits,
// robots ('A' allowed or not asked, 'D' disallowed, 'U' unreachable, '?'
// not asked yet). Reply: {'OK', done ('OK'|'LOST'|”), code per URL...}
// where a code is an Outcome, or -1 - maxdepth when robots.txt must be
// asked first (the unit is a site this worker did not know); done is then
// 'DEFER' and the item stays out until the call that adds those URLs.
const updateScript = `
local QUEUED, DUP, OOS, DEEP, LIMIT, DIS, UNR, STOP = %d, %d, %d, %d, %d, %d, %d, %d
local function drop(code) redis.call('HINCRBY', G, 'drop:' .. code, 1) end

local function add(u, host, url, d, from, h, lb, rb)
  local K = ukey(u)
  local v = redis.call('HMGET', K, 'site', 'maxdepth', 'maxpages', 'accepted')
  if v[1] ~= '1' then drop(OOS) return OOS end
  if d > num(v[2]) then drop(DEEP) return DEEP end
  if redis.call('SISMEMBER', P .. 'stopped', host) == 1 then drop(STOP) return STOP end
  if rb == '?' then return -1 - num(v[2]) end
  if not seen(u, K, h, lb) then drop(DUP) return DUP end
  if rb == 'D' or rb == 'U' then
    local code = DIS
    if rb == 'U' then code = UNR end
    drop(code)
    redis.call('HINCRBY', K, 'blocked', 1)
    return code
  end
  local mp = num(v[3])
  if mp > 0 and num(v[4]) >= mp then drop(LIMIT) return LIMIT end
  redis.call('HINCRBY', K, 'accepted', 1)
  push(u, d, url .. '\0' .. from, false)
  redis.call('HINCRBY', G, 'pushes', 1)
  return QUEUED
end

local res = {'OK', ''}
local n = tonumber(ARGV[9])
local need = false
for i = 0, n - 1 do
  local a = 10 + i * 8
  local code = add(ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5], tonumber(ARGV[a + 6]), ARGV[a + 7])
  if code < 0 then need = true end
  res[#res + 1] = code
end
local id = ARGV[7]
if id ~= '' and need then
  -- Some links wait for a robots.txt answer: the item stays out until
  -- they are in, so the crawl cannot look complete in between.
  res[2] = 'DEFER'
elseif id ~= '' then
  local data = redis.call('HGET', P .. 'lease', id)
  if not data then
    res[2] = 'LOST'
  else
    redis.call('ZREM', P .. 'out', id)
    redis.call('HDEL', P .. 'lease', id)
    local u = split3(data)
    local K = ukey(u)
    local field = 'done'
    if ARGV[8] == '1' then field = 'failed' end
    redis.call('HINCRBY', K, 'out', -1)
    redis.call('HINCRBY', K, field, 1)
    redis.call('HINCRBY', G, 'out', -1)
    redis.call('HINCRBY', G, field, 1)
    ready(u)
    -- Next's waiters care when the run-wide limit frees a place, and
    -- when the last item is done (the crawl may be complete).
    if MAXIF > 0 then wakeN = true end
    local g = redis.call('HMGET', G, 'queued', 'out')
    if num(g[1]) == 0 and num(g[2]) == 0 then wakeN = true end
    res[2] = 'OK'
  end
end
return finish(res)
`

// claimScript records a redirect target about to be requested in its
// unit's seen set. ARGV[7] unit, [8] hash (int64 decimal), [9] hash low
// bits. Reply: {'OK', 'NEW'|'DUP'|'OOS'} (OOS: the unit is no site of the
// crawl, nothing recorded).
const claimScript = `
local u = ARGV[7]
local K = ukey(u)
if redis.call('HGET', K, 'site') ~= '1' then return finish({'OK', 'OOS'}) end
if seen(u, K, ARGV[8], tonumber(ARGV[9])) then return finish({'OK', 'NEW'}) end
return finish({'OK', 'DUP'})
`

// siteScript registers a site (a unit with limits; first registration
// wins). ARGV[7] unit, [8] max pages, [9] max depth, [10] in-flight, [11]
// gap µs. Reply: {'OK', maxpages, maxdepth, inflight, gap}.
const siteScript = `
local u = ARGV[7]
local K = ukey(u)
if redis.call('HGET', K, 'site') ~= '1' then
  redis.call('HSET', K, 'site', 1, 'maxpages', ARGV[8], 'maxdepth', ARGV[9], 'hif', ARGV[10], 'hgap', ARGV[11])
  redis.call('SADD', P .. 'units', u)
  redis.call('HINCRBY', G, 'sites', 1)
  redis.call('PUBLISH', ARGV[5], 's')
  ready(u)
end
local v = redis.call('HMGET', K, 'maxpages', 'maxdepth', 'hif', 'hgap')
return finish({'OK', num(v[1]), num(v[2]), num(v[3]), num(v[4])})
`

// stopScript stops a host: drops its queued items and refuses later adds.
// ARGV[7] unit, [8] host. Reply: {'OK', dropped}.
const stopScript = `
local STOP = %d
local u, host = ARGV[7], ARGV[8]
redis.call('SADD', P .. 'stopped', host)
local K = ukey(u)
local maxd = num(redis.call('HGET', K, 'maxd'))
local removed = 0
for d = 0, maxd do
  local q = P .. 'q:' .. u .. ':' .. d
  local all = redis.call('LRANGE', q, 0, -1)
  if #all > 0 then
    local keep = {}
    for _, e in ipairs(all) do
      local a = string.match(e, '^[%%a][%%w+.-]*://([^/?#%%z]*)')
      if a then a = string.gsub(a, '^.*@', '') end
      if a == host then removed = removed + 1 else keep[#keep + 1] = e end
    end
    if #keep < #all then
      redis.call('DEL', q)
      for i = 1, #keep, 1000 do redis.call('RPUSH', q, unpack(keep, i, math.min(i + 999, #keep))) end
    end
  end
end
if removed > 0 then
  redis.call('HINCRBY', K, 'queued', -removed)
  redis.call('HINCRBY', K, 'accepted', -removed)
  redis.call('HINCRBY', G, 'queued', -removed)
  redis.call('HINCRBY', G, 'drop:' .. STOP, removed)
  ready(u)
end
redis.call('HSET', K, 'stopped', 1)
wake = true
return finish({'OK', removed})
`

// tripScript trips the slowdown latch: the shard's (ARGV[7] = ”) or one
// unit's. ARGV[8] the URL that tripped it. Reply: {'OK', 1 if this call
// tripped it}.
const tripScript = `
local u, url = ARGV[7], ARGV[8]
if u == '' then
  if SLOWED then return finish({'OK', 0}) end
  redis.call('HSET', G, 'slowed', 1, 'sdurl', url, 'sdat', now)
  SLOWED = true
  if MAXIF == 0 or MAXIF > SDIF then MAXIF = SDIF end
  if GAP < SDGAP then GAP = SDGAP end
  GAPS = spaced(GAP)
  for _, r in ipairs(redis.call('ZRANGE', P .. 'ready', 0, -1)) do ready(r) end
else
  local K = ukey(u)
  if redis.call('HGET', K, 'slowed') == '1' then return finish({'OK', 0}) end
  redis.call('HSET', K, 'slowed', 1, 'sdurl', url, 'sdat', now)
  redis.call('HINCRBY', G, 'slowedunits', 1)
  ready(u)
end
wake = true
return finish({'OK', 1})
`

// renewScript extends the leases of items and slots a worker holds and
// runs the common part (releases, reaping). ARGV[7..] ids of items then
// '|' then ids of slots. Reply: {'OK', lost item ids...}.
const renewScript = `
local res = {'OK'}
local z = 'out'
for i = 7, #ARGV do
  local id = ARGV[i]
  if id == '|' then
    z = 'slots'
  elseif redis.call('ZADD', P .. z, 'XX', 'CH', now + LEASE, id) == 0 and z == 'out' then
    if not redis.call('ZSCORE', P .. 'out', id) then res[#res + 1] = id end
  end
end
return finish(res)
`

// statsScript returns the shard state and, when ARGV[7] is '1', every
// unit's counters. Reply: {'OK', {g field, value...}, {unit, {field,
// value...}}...}.
const statsScript = `
local res = {'OK', redis.call('HGETALL', G)}
if ARGV[7] == '1' then
  for _, u in ipairs(redis.call('SMEMBERS', P .. 'units')) do
    res[#res + 1] = u
    res[#res + 1] = redis.call('HMGET', ukey(u), 'queued', 'out', 'inflight', 'done', 'failed', 'requests', 'blocked', 'stopped', 'rehanded', 'accepted', 'site')
  end
end
return finish(res)
`

// initScript creates the shard state or checks it. ARGV: crawl name,
// shards, max in flight, gap µs, slowdown in flight, slowdown gap µs,
// start window µs, alpha, new id. Reply: {'OK', id} | {'CONFLICT', field,
// stored}.
const initScript = `
local G = KEYS[1]
local f = {'crawl', 'shards', 'maxif', 'gap', 'sdif', 'sdgap', 'startwin'}
local id = redis.call('HGET', G, 'id')
if not id then
  redis.call('HSET', G, 'id', ARGV[9], 'crawl', ARGV[1], 'shards', ARGV[2], 'maxif', ARGV[3], 'gap', ARGV[4],
    'sdif', ARGV[5], 'sdgap', ARGV[6], 'startwin', ARGV[7], 'alpha', ARGV[8], 'queued', 0, 'out', 0, 'inflight', 0)
  return {'OK', ARGV[9]}
end
for i, name in ipairs(f) do
  local v = redis.call('HGET', G, name)
  if v ~= ARGV[i] then return {'CONFLICT', name, v or ''} end
end
return {'OK', id}
`

// lockScript / unlockScript: the fleet-wide robots.txt fetch lock.
const unlockScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], 'r')
  return 1
end
return 0
`

// lowBits is how many low bits of a URL hash pick its seen bucket (Lua
// computes them exactly; 2^26 buckets is far beyond any unit).
const lowBits = 26

var (
	scriptNext    = redis.NewScript(prelude + nextScript)
	scriptAcquire = redis.NewScript(prelude + acquireScript)
	scriptReadmit = redis.NewScript(prelude + readmitScript)
	scriptLate    = redis.NewScript(prelude + lateScript)
	scriptUpdate  = redis.NewScript(prelude + fmt.Sprintf(seenLib, 1<<lowBits) + fmt.Sprintf(updateScript,
		frontier.Queued, frontier.Duplicate, frontier.OutOfScope, frontier.TooDeep, frontier.PageLimit,
		frontier.Disallowed, frontier.RobotsUnreachable, frontier.Stopped))
	scriptClaim  = redis.NewScript(prelude + fmt.Sprintf(seenLib, 1<<lowBits) + claimScript)
	scriptSite   = redis.NewScript(prelude + siteScript)
	scriptStop   = redis.NewScript(prelude + fmt.Sprintf(stopScript, frontier.Stopped))
	scriptTrip   = redis.NewScript(prelude + tripScript)
	scriptRenew  = redis.NewScript(prelude + renewScript)
	scriptStats  = redis.NewScript(prelude + statsScript)
	scriptInit   = redis.NewScript(initScript)
	scriptUnlock = redis.NewScript(unlockScript)
)
