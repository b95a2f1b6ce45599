--[[
dlock: the fencing-token rules shared by exclusive.lua and dlock.lua (LuaScript puts this text in front
of each of them, after epoch.lua).

A token is above the last one by the token block, and at least the server clock in microseconds, so
tokens keep increasing even where the counter itself was lost (restart without persistence, failover to
a replica that missed the last increments), as long as the server clock does not step back.

The token block is the number of tokens each grant reserves: the client may hand its hold to its own
waiting threads with the tokens in between. The client sends it with every acquire (RedisBackend's
TOKEN_BLOCK, the one definition); it is small on purpose (16): the counter stays behind the server clock
in microseconds unless one name is granted more than 1,000,000 / 16 = 62,500 times a second, beyond what
one server does, so the clock floor still protects a lost counter.
]]

-- Tokens stay exact Lua numbers (doubles) below 2^52.
local EXACT_LIMIT = 4503599627370496

-- The token block an acquire was sent with, or nil and an error message for a missing or invalid one:
-- a client that sends none (an older script layout, a hand-written call) must fail, never grant with a
-- made-up block.
local function tokenBlock(text)
  local block = tonumber(text)
  if block == nil or block < 1 or block > 1000000 or block ~= math.floor(block) then
    return nil, 'dlock: acquire needs the token block (a whole number from 1 to 1000000), got '
      .. (text == nil and 'none' or ("'" .. tostring(text) .. "'"))
  end
  return block
end
