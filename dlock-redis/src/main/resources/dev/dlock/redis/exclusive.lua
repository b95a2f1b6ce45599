--[[
dlock: the exclusive lock (Mode.EXCLUSIVE, kind 'lock') in as few Redis commands as possible. Every other
mode runs dlock.lua.

ARGV[1] names the operation. Lock names, owners and numbers arrive only through KEYS and ARGV; nothing
is ever spliced into this source. Time is the server's: redis.call('TIME') and PX/PEXPIRE, which count
on the server's clock.

One lock has these keys, all with the same hash tag, so one Cluster slot:
  hold     string  '<token>:<owner length>:<owner><name>', PX the lease; absent while the lock is free.
                   It is the ':h' key of dlock.lua's layout: a client still running dlock.lua for
                   exclusive locks (before the fast path) finds a string there and fails with WRONGTYPE
                   instead of granting, and its hash there keeps this script from granting (the key
                   exists), so the two never hold one lock together.
  tokens   string  the last fencing token; never expires, never deleted (shared with dlock.lua)
  waiting  string  present while some client may wait: set by a waiting attempt that found the lock
                   held, with a time to live covering that waiter's next attempt (the holder's time left
                   plus the wait lease); a release publishes a wake-up only when it deletes this key.
]]

local op = ARGV[1]

-- The owner and token of a hold's value, or nil for a missing key or one of another type.
local function parse(value)
  if type(value) ~= 'string' then
    return nil
  end
  local tokenEnd = string.find(value, ':', 1, true)
  local lengthEnd = tokenEnd and string.find(value, ':', tokenEnd + 1, true)
  local length = lengthEnd and tonumber(string.sub(value, tokenEnd + 1, lengthEnd - 1))
  if not length then
    return nil
  end
  return string.sub(value, lengthEnd + 1, lengthEnd + length), string.sub(value, 1, tokenEnd - 1), lengthEnd + length
end

local function holdValue(token, owner, name)
  return token .. ':' .. #owner .. ':' .. owner .. name
end

-- GET, reading a key of another type (a holders hash of dlock.lua, see above) as missing. Any other
-- error aborts the script: in a Cluster, a key of a slot this node no longer serves must fail the call
-- (the client then retries slot by slot), never read as a lost hold.
local function getString(key)
  local value = redis.pcall('GET', key)
  if type(value) == 'table' and value.err then
    if string.find(value.err, 'WRONGTYPE', 1, true) == 1 then
      return nil
    end
    error(value)
  end
  return value
end

-- The owner's hold's value, or nil when the key is missing, of another type or someone else's.
local function ownHold(hold, owner)
  local value = getString(hold)
  local holder = parse(value)
  if holder == owner then
    return value
  end
  return nil
end

-- KEYS: hold tokens waiting [epoch]; ARGV: op owner leaseMillis queueMillis name tokenBlock [maxLeaseMillis
-- marginMillis]. The epoch key, max lease and its drift margin are given unless the client opted out of
-- the hold-back (epoch.lua); the token block always (tokens.lua).
-- Returns the token (> 0) when granted; when busy -(milliseconds the hold has left) - 1, or 0 if unknown;
-- when held back -(HELD_BACK + milliseconds left) - 1.
local function acquire()
  local hold, tokens, waiting = KEYS[1], KEYS[2], KEYS[3]
  local block, invalid = tokenBlock(ARGV[6])
  if not block then
    return redis.error_reply(invalid)
  end
  local left = redis.call('PTTL', hold)
  if left == -2 then
    local clock = redis.call('TIME')
    local nowMicros = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
    if KEYS[4] then
      local wait, problem = holdBack(KEYS[4], ARGV[7], ARGV[8], math.floor(nowMicros / 1000))
      if not wait then
        return redis.error_reply(problem)
      end
      if wait > 0 then
        return -(HELD_BACK + wait + 1)
      end
    end
    -- The fencing rule of tokens.lua: above the last token (by the block), and at least the server clock
    -- in microseconds. The clock is normally ahead, so the counter is set to it and the last token read in
    -- one call (SET ... GET, Redis 6.2); when it was not ahead, the counter is put right before anything
    -- else runs (a script is atomic), so it never goes back.
    local clockText = string.format('%.0f', nowMicros)
    local token = tonumber(redis.call('SET', tokens, clockText, 'GET') or '0') + block
    local text = clockText
    if nowMicros > token and nowMicros < EXACT_LIMIT then
      token = nowMicros
    else
      text = string.format('%.0f', token)
      redis.call('SET', tokens, text)
    end
    redis.call('SET', hold, holdValue(text, ARGV[2], ARGV[5]), 'PX', ARGV[3])
    return token
  end
  local queueMillis = tonumber(ARGV[4])
  if queueMillis > 0 then
    local keep = math.max(left, 0) + queueMillis
    if redis.call('PTTL', waiting) < keep then
      redis.call('SET', waiting, '1', 'PX', keep)
    end
  end
  if left < 0 then
    return 0
  end
  return -(left + 1)
end

-- KEYS: hold waiting; ARGV: op owner channel. Returns 1 if the owner held.
local function release()
  local hold, waiting = KEYS[1], KEYS[2]
  if not ownHold(hold, ARGV[2]) then
    return 0
  end
  -- One DEL for both: the hold exists (just read), so 2 means someone may wait.
  if redis.call('DEL', hold, waiting) == 2 then
    redis.call('PUBLISH', ARGV[3], '')
  end
  return 1
end

-- ARGV: op, then (resource key prefix, owner, leaseMillis) per lease; KEYS[1] only routes the call in a
-- Cluster (every lock of one call lives on the node of KEYS[1]). Returns the server's clock in
-- microseconds (the client checks it for forward jumps), then the 1-based positions of the leases no
-- longer held.
local function renew()
  local clock = redis.call('TIME')
  local lost = {tonumber(clock[1]) * 1000000 + tonumber(clock[2])}
  local position = 0
  for i = 2, #ARGV, 3 do
    position = position + 1
    local hold = ARGV[i] .. ':h'
    if ownHold(hold, ARGV[i + 1]) then
      -- A shorter time than is left (an extend that cuts the lease): waiters that asked before would
      -- wait for the old expiry, so they are woken as by a release, if someone may wait.
      if redis.call('PTTL', hold) > tonumber(ARGV[i + 2]) and redis.call('EXISTS', ARGV[i] .. ':m') == 1 then
        redis.call('PUBLISH', ARGV[i] .. ':w', '')
      end
      redis.call('PEXPIRE', hold, ARGV[i + 2])
    else
      lost[#lost + 1] = position
    end
  end
  return lost
end

-- KEYS: hold; ARGV: op. Read-only. Returns dlock.lua's describe shape:
-- {name or '', 0 (waiters are not counted), owner, 'E' .. token, ttlMillis} or {'', 0} when free.
local function describe()
  local value = getString(KEYS[1])
  local owner, token, nameFrom = parse(value)
  if not owner then
    return {'', 0}
  end
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then
    return {'', 0}
  end
  return {string.sub(value, nameFrom + 1), 0, owner, 'E' .. token, left}
end

-- KEYS: hold tokens; ARGV: op owner token. Redlock's write-back: raises the token counter to at least
-- the token (never lowers it) and, where the owner holds, records that token as its hold's token.
local function floor()
  local hold, tokens = KEYS[1], KEYS[2]
  local owner, token = ARGV[2], tonumber(ARGV[3])
  if tonumber(redis.call('GET', tokens) or '0') < token then
    redis.call('SET', tokens, string.format('%.0f', token))
  end
  local value = ownHold(hold, owner)
  if value then
    local _, _, nameFrom = parse(value)
    redis.call('SET', hold, holdValue(string.format('%.0f', token), owner, string.sub(value, nameFrom + 1)), 'KEEPTTL')
  end
  return 1
end

-- KEYS: hold waiting; ARGV: op channel. Keeps the token counter; wakes waiters if a hold was removed.
local function forceRelease()
  local removed = redis.call('DEL', KEYS[1])
  redis.call('DEL', KEYS[2])
  if removed == 0 then
    return 0
  end
  redis.call('PUBLISH', ARGV[2], '')
  return 1
end

-- KEYS: epoch; ARGV: op maxLease margin. Read-only: the milliseconds a grant asked now would be held
-- back (epoch.lua), 0 when it would not.
local function heldBack()
  local clock = redis.call('TIME')
  local left, problem = heldBackFor(KEYS[1], ARGV[2], ARGV[3], tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
  if not left then
    return redis.error_reply(problem)
  end
  return left
end

if op == 'acquire' then
  return acquire()
elseif op == 'release' then
  return release()
elseif op == 'renew' then
  return renew()
elseif op == 'describe' then
  return describe()
elseif op == 'heldback' then
  return heldBack()
elseif op == 'force' then
  return forceRelease()
elseif op == 'floor' then
  return floor()
end
return redis.error_reply('dlock: unknown operation ' .. tostring(op))
