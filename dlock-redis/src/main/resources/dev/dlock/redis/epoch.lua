--[[
dlock: the hold-back after a lost state, shared by exclusive.lua and dlock.lua (LuaScript puts this text
in front of each of them, and at the top of the function library that holds both). Every grant calls
holdBack first; it grants nothing while a lease this server may have forgotten could still be valid.

One key per namespace, '<namespace>:epoch', never expiring (in a Cluster one per namespace and hash
slot, '<namespace>:epoch:{<tag>}' with a tag of the resource's slot, since a script reaches only the keys
of its own slot):
  '<run id> <base ms> <max lease ms>'
  run id    INFO server's run_id of the server process that wrote it (a new one on every start)
  base      epoch milliseconds (server clock) after which this server can have lost no grant
  max lease the longest lease the clients of the namespace declared (the largest seen)
Grants are held back until base + max lease + the drift margin the client sends with its max lease
(dev.dlock.spi.DriftMargin, the one definition of the margin).

  - Missing (a server restarted without persistence, or the namespace's first grant), or written by
    another process (restarted from an RDB or AOF file, which may miss the last writes; keys moved by a
    Cluster reshard; a replica promoted by a failover): it depends on whether this process ever
    replicated another server (INFO replication's second_repl_offset is set: a replica promoted by a
    Sentinel or Cluster failover, or a master that took its replication history from an RDB file).
    - Never: its data is its own writes, a file it loaded at its start or keys moved to it, so any grant
      lost was made before this process started: base is its start (from uptime_in_seconds, rounded up
      to the next second), or the marker's own base if later (a marker moved here during its writer's
      hold-back).
    - Once: it may have missed the last grants of the server it replicated (the marker included, when
      the namespace's first grant was among them), so the loss may be as late as now: base is now.
  - A client declaring a shorter max lease than the one recorded is refused: after a loss only the
    declaring client's value is known, so every client of a namespace must declare the same (or larger).
A FLUSHALL or a DEL of the key on a server that keeps running is not seen as a loss (it reads as the
namespace's first grant); nor is a master demoted to a replica and promoted again without a restart
that missed the new master's rewrite of the marker (it reads its own run id). docs/safety.md says so.
]]

-- Busy answers caused by a hold-back are -(HELD_BACK + milliseconds left + 1), so the client can tell
-- them from a busy lock (RedisBackend.HELD_BACK, same value; leases are at most 365 days, far below it).
local HELD_BACK = 1099511627776

-- Whether this process took over another server's history: promoted from replica, or (a master) loaded
-- a replication id from an RDB file. Read only when the marker is missing or another process wrote it;
-- unknown counts as yes.
local function onceReplicated()
  local second = string.match(redis.call('INFO', 'replication'), 'second_repl_offset:(%-?%d+)')
  return second == nil or tonumber(second) >= 0
end

-- Validates the client's declaration: maxLease and margin as numbers, or nil and an error message.
local function declared(maxLease, margin)
  maxLease, margin = tonumber(maxLease), tonumber(margin)
  if maxLease == nil or margin == nil or maxLease < 1 or margin < 0 then
    return nil, 'dlock: the hold-back needs the max lease and its drift margin (whole milliseconds), got '
      .. tostring(maxLease) .. ' and ' .. tostring(margin)
  end
  return maxLease, margin
end

-- This process's run id, read once per run of this chunk. Run as a function library (FCALL, Redis 7+:
-- FunctionLibrary.java) the chunk runs once per load of the library, and every server process loads it
-- anew (at its start from its RDB or AOF file, on a replica from its master, or from a client after
-- 'Function not found'), so the id kept here is always the id of the process that runs the call, and a
-- grant costs no INFO. Run as an EVAL script, the chunk and so INFO run for every call.
local processRun = nil
local function ownRun()
  if processRun == nil then
    processRun = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
    if processRun == nil then
      error('dlock: INFO server has no run_id')
    end
  end
  return processRun
end

-- What a grant now finds, read-only: this process's run id, the base (see above), and the recorded max
-- lease (0 when none).
local function epochState(epoch, nowMillis)
  local run = ownRun()
  local marker = redis.call('GET', epoch)
  local markRun, base, recorded
  if marker then
    -- an unreadable marker reads as missing
    markRun, base, recorded = string.match(marker, '^(%x+) (%d+) (%d+)$')
  end
  recorded = tonumber(recorded) or 0
  local marked = tonumber(base) or 0
  if markRun == run then
    return run, marked, recorded, true
  elseif onceReplicated() then
    return run, nowMillis, recorded, false
  end
  -- a marker moved here with its writer's hold-back still running keeps it
  local uptime = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)'))
  return run, math.max((math.floor(nowMillis / 1000) - uptime + 1) * 1000, marked), recorded, false
end

-- Returns the milliseconds grants stay held back (0: grant), or nil and an error message.
-- epoch: the namespace's marker key; maxLease, margin: the client's declared max lease and the drift
-- margin for it, in ms, as sent (ARGV text); nowMillis: TIME.
local function holdBack(epoch, maxLease, margin, nowMillis)
  maxLease, margin = declared(maxLease, margin)
  if not maxLease then
    return nil, margin
  end
  local run, base, recorded, own = epochState(epoch, nowMillis)
  if maxLease < recorded then
    return nil, 'dlock: this client declares maxLease ' .. maxLease .. 'ms, but a client of the same namespace '
      .. 'declared ' .. string.format('%.0f', recorded) .. 'ms (' .. epoch .. '): every client of a namespace '
      .. 'must declare the same maxLease, or grants after a restart could overlap its longer leases'
  end
  -- maxLease >= recorded here (a shorter one was refused above): it is the longest lease, and the margin
  -- the client sent is the one for it.
  if not own or maxLease > recorded then
    redis.call('SET', epoch, run .. ' ' .. string.format('%.0f', base) .. ' ' .. string.format('%.0f', maxLease))
  end
  return math.max(base + maxLease + margin - nowMillis, 0)
end

-- The hold-back a grant asked now would meet, in ms (0: none), without writing anything (describe); nil
-- and an error message for a bad declaration. A client whose declaration is shorter than the recorded one
-- would be refused; the recorded value is used here (its margin is the client's, a few ms apart at most).
local function heldBackFor(epoch, maxLease, margin, nowMillis)
  maxLease, margin = declared(maxLease, margin)
  if not maxLease then
    return nil, margin
  end
  local _, base, recorded = epochState(epoch, nowMillis)
  return math.max(base + math.max(maxLease, recorded) + margin - nowMillis, 0)
end
