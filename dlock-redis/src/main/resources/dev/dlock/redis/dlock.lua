--[[
dlock: every atomic step of the Redis backend for fair, read-write and semaphore locks, in one script
(one SHA, one SCRIPT LOAD). Exclusive locks run exclusive.lua.

ARGV[1] names the operation. Lock names, owners and numbers arrive only through KEYS and ARGV; nothing
is ever spliced into this source. Time is the server's: redis.call('TIME'), never the client's clock.

One resource (namespace, kind, name) has these keys, all with the same hash tag, so one Cluster slot:
  holders   hash    owner -> mode letter followed by the fencing token ("E17"); '=name' -> lock name
  expiries  zset    owner -> expiry of the hold, epoch milliseconds by the server clock
  queue     zset    owner -> arrival sequence (fair-lock waiters, queued writers)
  waits     zset    owner -> expiry of the queue entry, epoch milliseconds by the server clock
  tokens    string  the last fencing token; never expires, never deleted, so tokens survive both
The holders/expiries and queue/waits keys carry a PEXPIREAT equal to their latest member's expiry, so
an abandoned resource disappears by itself. Mode letters: F fair, R read, W write, P permit (E, exclusive,
only in holds that exclusive.lua reports).
]]

local op = ARGV[1]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local nowMicros = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

local function removeAll(command, key, members)
  for i = 1, #members, 500 do
    redis.call(command, key, unpack(members, i, math.min(i + 499, #members)))
  end
end

-- Forgets members of a zset+companion pair whose expiry has passed.
local function dropExpired(expiryZset, companion, companionCommand)
  local gone = redis.call('ZRANGEBYSCORE', expiryZset, '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', expiryZset, '-inf', now)
    removeAll(companionCommand, companion, gone)
  end
end

-- Gives both keys of a pair the expiry of the pair's longest-lived member, or deletes them when empty.
local function settle(expiryZset, companion)
  local last = redis.call('ZRANGE', expiryZset, -1, -1, 'WITHSCORES')
  if #last == 0 then
    redis.call('DEL', companion)
  else
    redis.call('PEXPIREAT', expiryZset, last[2])
    redis.call('PEXPIREAT', companion, last[2])
  end
end

local function earliest(expiryZset)
  local first = redis.call('ZRANGE', expiryZset, 0, 0, 'WITHSCORES')
  if #first == 0 then
    return nil
  end
  return tonumber(first[2])
end

local function head(queue)
  return redis.call('ZRANGE', queue, 0, 0)[1]
end

local function writerHolds(holders, expiries, except)
  for _, owner in ipairs(redis.call('ZRANGE', expiries, 0, -1)) do
    if owner ~= except and string.sub(redis.call('HGET', holders, owner) or '', 1, 1) == 'W' then
      return true
    end
  end
  return false
end

-- The next fencing token by the rule of tokens.lua: above the last one by the block, and at least the
-- server's clock in microseconds.
local function nextToken(tokens, block)
  local token = tonumber(redis.call('GET', tokens) or '0') + block
  if nowMicros > token and nowMicros < EXACT_LIMIT then
    token = nowMicros
  end
  redis.call('SET', tokens, string.format('%.0f', token))
  return token
end

local function wake(channel, payload)
  redis.call('PUBLISH', channel, payload)
end

-- KEYS: holders expiries queue waits tokens [epoch]
-- ARGV: op owner mode leaseMillis permits queueMillis downgradeFrom('' if none) name tokenBlock [maxLeaseMillis
-- marginMillis]. The epoch key, max lease and its drift margin are given unless the client opted out of
-- the hold-back (epoch.lua); the token block always (tokens.lua).
-- Returns the token (> 0) when granted; when busy -(milliseconds until the first hold or queue entry
-- expires) - 1, or 0 when there is none; when held back -(HELD_BACK + milliseconds left) - 1.
local function acquire()
  local holders, expiries, queue, waits, tokens = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
  local owner, mode = ARGV[2], ARGV[3]
  local lease, permits, queueMillis = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local downgradeFrom, name = ARGV[7], ARGV[8]
  local block, invalid = tokenBlock(ARGV[9])
  if not block then
    return redis.error_reply(invalid)
  end
  dropExpired(expiries, holders, 'HDEL')
  dropExpired(waits, queue, 'ZREM')
  local held = redis.call('ZCARD', expiries)
  local grant
  if mode == 'W' then
    grant = held == 0
  elseif mode == 'F' then
    local first = head(queue)
    grant = held == 0 and (first == nil or first == owner)
  elseif mode == 'R' then
    grant = not writerHolds(holders, expiries, downgradeFrom)
      and (downgradeFrom ~= '' or redis.call('ZCARD', queue) == 0)
  elseif mode == 'P' then
    grant = held < permits
  else
    return redis.error_reply('dlock: unknown mode ' .. mode)
  end
  local heldBack = 0
  if grant and KEYS[6] then
    local problem
    heldBack, problem = holdBack(KEYS[6], ARGV[10], ARGV[11], now)
    if not heldBack then
      return redis.error_reply(problem)
    end
    grant = heldBack == 0
  end
  if grant then
    local token = nextToken(tokens, block)
    redis.call('HSET', holders, owner, mode .. string.format('%.0f', token), '=name', name)
    redis.call('ZADD', expiries, now + lease, owner)
    settle(expiries, holders)
    if redis.call('ZREM', queue, owner) == 1 then
      redis.call('ZREM', waits, owner)
      settle(waits, queue)
    end
    return token
  end
  if queueMillis > 0 and (mode == 'F' or mode == 'W') then
    if not redis.call('ZSCORE', queue, owner) then
      local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
      local sequence = 1
      if #last > 0 then
        sequence = tonumber(last[2]) + 1
      end
      redis.call('ZADD', queue, sequence, owner)
    end
    redis.call('ZADD', waits, now + queueMillis, owner)
    settle(waits, queue)
  end
  if heldBack > 0 then
    return -(HELD_BACK + heldBack + 1)
  end
  -- Retry hint: when the first hold or queue entry runs out (a dead fair-queue head included).
  local expiresAt, queued = earliest(expiries), earliest(waits)
  if queued and (expiresAt == nil or queued < expiresAt) then
    expiresAt = queued
  end
  if expiresAt == nil then
    return 0
  end
  return -(math.max(expiresAt - now, 0) + 1)
end

-- KEYS: holders expiries queue waits; ARGV: op owner mode channel. Returns 1 if the owner held.
local function release()
  local holders, expiries, queue, waits = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  local owner, mode, channel = ARGV[2], ARGV[3], ARGV[4]
  dropExpired(expiries, holders, 'HDEL')
  dropExpired(waits, queue, 'ZREM')
  if redis.call('ZREM', expiries, owner) == 0 then
    return 0
  end
  redis.call('HDEL', holders, owner)
  settle(expiries, holders)
  -- A reader leaving while other readers stay unblocks nobody.
  if mode ~= 'R' or redis.call('ZCARD', expiries) == 0 then
    local next = ''
    if mode == 'F' then
      next = head(queue) or ''
    end
    wake(channel, next)
  end
  return 1
end

-- KEYS: holders expiries queue waits; ARGV: op owner mode channel. Leaves the queue.
local function cancel()
  local queue, waits = KEYS[3], KEYS[4]
  local owner, mode, channel = ARGV[2], ARGV[3], ARGV[4]
  dropExpired(waits, queue, 'ZREM')
  if redis.call('ZREM', queue, owner) == 0 then
    return 0
  end
  redis.call('ZREM', waits, owner)
  settle(waits, queue)
  local next = ''
  if mode == 'F' then
    next = head(queue) or ''
  end
  wake(channel, next)
  return 1
end

-- ARGV: op, then (resource key prefix, owner, leaseMillis) per lease; KEYS[1] only routes the call in a
-- Cluster (every resource of one call lives on the node of KEYS[1]). Returns the server's clock in
-- microseconds (the client checks it for forward jumps), then the 1-based positions of the leases no
-- longer held.
local function renew()
  local lost = {nowMicros}
  local position = 0
  for i = 2, #ARGV, 3 do
    position = position + 1
    local expiries, holders = ARGV[i] .. ':x', ARGV[i] .. ':h'
    local owner, lease = ARGV[i + 1], tonumber(ARGV[i + 2])
    local expiry = redis.call('ZSCORE', expiries, owner)
    if expiry and tonumber(expiry) > now then
      redis.call('ZADD', expiries, 'XX', now + lease, owner)
      settle(expiries, holders)
      if now + lease < tonumber(expiry) then
        wake(ARGV[i] .. ':w', '') -- a cut lease: waiters that asked before would wait for the old expiry
      end
    else
      lost[#lost + 1] = position
    end
  end
  return lost
end

-- KEYS: holders expiries queue waits; ARGV: op. Read-only.
-- Returns {name or '', live queue entries, owner1, mode+token1, ttlMillis1, owner2, ...}.
local function describe()
  local holders, expiries, waits = KEYS[1], KEYS[2], KEYS[4]
  local result = {
    redis.call('HGET', holders, '=name') or '',
    redis.call('ZCOUNT', waits, '(' .. string.format('%.0f', now), '+inf'),
  }
  local entries = redis.call('ZRANGEBYSCORE', expiries, '(' .. string.format('%.0f', now), '+inf', 'WITHSCORES')
  for i = 1, #entries, 2 do
    local value = redis.call('HGET', holders, entries[i])
    if value then
      result[#result + 1] = entries[i]
      result[#result + 1] = value
      result[#result + 1] = tonumber(entries[i + 1]) - now
    end
  end
  return result
end

-- KEYS: holders tokens; ARGV: op owner token. Redlock's write-back: raises the token counter to at least
-- the token (never lowers it) and, where the owner holds, records that token as its hold's token.
local function floor()
  local holders, tokens = KEYS[1], KEYS[2]
  local owner, token = ARGV[2], tonumber(ARGV[3])
  if tonumber(redis.call('GET', tokens) or '0') < token then
    redis.call('SET', tokens, string.format('%.0f', token))
  end
  local value = redis.call('HGET', holders, owner)
  if value then
    redis.call('HSET', holders, owner, string.sub(value, 1, 1) .. string.format('%.0f', token))
  end
  return 1
end

-- KEYS: holders expiries queue waits; ARGV: op channel. Keeps the token counter.
local function forceRelease()
  local holders, expiries, queue, waits = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  local after = '(' .. string.format('%.0f', now)
  local live = redis.call('ZCOUNT', expiries, after, '+inf') + redis.call('ZCOUNT', waits, after, '+inf')
  redis.call('DEL', holders, expiries, queue, waits)
  if live == 0 then
    return 0
  end
  wake(ARGV[2], '')
  return 1
end

if op == 'acquire' then
  return acquire()
elseif op == 'release' then
  return release()
elseif op == 'renew' then
  return renew()
elseif op == 'cancel' then
  return cancel()
elseif op == 'describe' then
  return describe()
elseif op == 'force' then
  return forceRelease()
elseif op == 'floor' then
  return floor()
end
return redis.error_reply('dlock: unknown operation ' .. tostring(op))
