"""Cache-aware routing in the gate: the route key a request carries, and the one replica every gate
pod picks for it, whatever order each pod's DNS answers filled its server slots in (issue 31, F7).

Why not HAProxy's own ring alone. `balance hash` with `hash-type consistent` places a server on
the ring by its numeric id (haproxy/haproxy@v2.6.0 src/lb_chash.c:
`full_hash(srv->puid * SRV_EWGHT_RANGE + node)`), and `server-template` numbers its slots in the
order DNS records arrive, a slot keeping its address while the record stays (src/resolvers.c,
resolv_get_ip_from_response: the current address scores higher, then the first unused record).
Two gate pods that started at different times, or saw the records in another order, give a
replica different slots and so different places on the ring: a prompt prefix is then cached on
two replicas instead of one. HAProxy 3.0 added the server keyword `hash-key addr|addr-port`,
which derives the ring from the server's address ("When services are discovered through DNS
resolution, the order in which DNS records get resolved and assigned to servers is arbitrary",
haproxy/haproxy@faa8c3e0, first in v3.0-dev7, so HAProxy 3.0); 2.6, the release line the gate
runs and is tested on, refuses it ("unknown keyword 'hash-key'").

What 2.6 can do instead: pick the server in Lua by rendezvous hashing (highest random weight) on
the replica's address, which is the same on every gate pod. Each request's key is hashed with
each ready replica's address; the highest score wins unless that replica already holds more than
BALANCE_FACTOR_PERCENT of the average load, the bound `hash-balance-factor` keeps too ("Consistent
Hashing with Bounded Loads", manual 2.6, 4.2 "hash-balance-factor"), in which case the next score
takes it. `use-server` accepts the name as a log-format string, and a rule naming a server that is
down is ignored (manual 2.6, 4.2 "use-server"), so the ring above stays the fallback. Both binaries
have Lua: Debian's 2.6 prints "Built with Lua version : Lua 5.3.6" in `haproxy -vv`, and the image
is built with USE_LUA=1 against lua5.3 (docker-library/repo-info@0ed0a0ed
repos/haproxy/remote/2.6.34-alpine.md). The Lua API used (core.register_fetches,
core.backends[...].servers, Server.get_addr, Server.get_stats, TXN.get_var) is doc/lua-api/index.rst
of v2.6.0. tests/test_routing.py runs two gates whose slots hold the replicas in opposite orders.
"""

from __future__ import annotations

from .haproxy_syntax import quoted

# The first bytes of the body a route key holds (a system prompt of a few hundred characters, or
# the start of a conversation), the load above the average at which a replica is passed over
# (150: half again its share), and how long the gate waits for a body.
ROUTE_PREFIX_BYTES = 512
BALANCE_FACTOR_PERCENT = 150
BODY_WAIT_SECONDS = 10
# The script, a file of the gate's ConfigMap beside haproxy.cfg.
SCRIPT = "route.lua"
FETCH = "gate_replica"


def route_key() -> list[str]:
    """What a cache-aware gate hashes: the model (an adapter is its own model) and the start of
    the body, which holds the prompt or the first messages, so requests that share a system
    prompt or a conversation's history meet the replica that cached it. Only a request that
    passed the key and the allowlist is waited for: nobody else can make the gate buffer."""
    return [
        # `at-least`: the gate waits for the first ROUTE_PREFIX_BYTES only, never a whole large
        # body; a client that has not sent them within BODY_WAIT_SECONDS gets 408 (measured on
        # 2.6.12; the frontend's `timeout client` is raised to the same wait, haproxy.py).
        f"    http-request wait-for-body time {BODY_WAIT_SECONDS}s at-least {ROUTE_PREFIX_BYTES}",
        "    http-request set-var(txn.model) req.body,json_query('$.model')",
        f'    http-request set-var-fmt(txn.route) "%[var(txn.model)] '
        f'%[req.body,bytes(0,{ROUTE_PREFIX_BYTES})]" if {{ req.body_len gt 0 }}',
    ]


def load_script(config_dir: str) -> list[str]:
    """The global line that loads the script from the gate's config directory."""
    return [f"    lua-load {quoted(f'{config_dir}/{SCRIPT}')}"]


def backend(replicas: int, health_path: str | None, upstream: str, no_replica: str) -> list[str]:
    """The ready replicas, found in DNS (`server-template` fills one slot per record of the
    headless Service and empties it when the pod goes, manual 2.6, 5.3.2 "resolvers"), each
    request sent to the replica the script picks for its key; a request without a key
    (GET /v1/models) is balanced round-robin."""
    check = (
        [
            "    option httpchk",
            f"    http-check send meth GET uri {quoted(health_path)}",
            "    http-check expect status 200",
        ]
        if health_path
        else []
    )
    return [
        "    balance hash var(txn.route)",
        "    hash-type consistent",
        f"    hash-balance-factor {BALANCE_FACTOR_PERCENT}",
        f"    http-request set-var(txn.replica) lua.{FETCH} if {{ var(txn.route) -m found }}",
        "    use-server %[var(txn.replica)] if { var(txn.replica) -m found }",
        *check,
        # A replica still in DNS that refuses connections (a pod shutting down in a rollout):
        # the retry goes to another one, and the failure marks it down at once. Only connection
        # failures are retried, so no request reaches a model twice (manual 2.6, 4.2 "option
        # redispatch", 5.2 "observe", "on-error").
        "    option redispatch 1",
        "    http-error status 503 content-type application/json string " + quoted(no_replica),
        "    default-server check inter 5s fall 2 rise 1 resolvers cluster init-addr none "
        "observe layer4 error-limit 1 on-error mark-down",
        f'    server-template replica 1-{replicas} "${{{upstream}}}"',
    ]


def script(backend_name: str) -> str:
    """route.lua: the `lua.gate_replica` fetch. Lua 5.3 integers are 64 bits and wrap on
    overflow, so FNV-1a and the splitmix64 finalizer below are computed exactly; math.ult
    compares them as unsigned."""
    return f"""-- gke-gpu API gate: the replica for a route key, by rendezvous hashing on each ready
-- replica's address, bounded by load (components/service/haproxy_routing.py); do not edit.
local BACKEND = "{backend_name}"
local FACTOR = {BALANCE_FACTOR_PERCENT}

local function fnv1a(text)
  local h = 0xcbf29ce484222325
  for i = 1, #text do
    h = (h ~ text:byte(i)) * 0x100000001b3
  end
  return h
end

local function mix(z)
  z = (z ~ (z >> 30)) * 0xbf58476d1ce4e5b9
  z = (z ~ (z >> 27)) * 0x94d049bb133111eb
  return z ~ (z >> 31)
end

core.register_fetches("{FETCH}", function(txn)
  local key = txn:get_var("txn.route")
  if key == nil then
    return nil
  end
  local hashed = fnv1a(key)
  local ready, total = {{}}, 0
  for name, server in pairs(core.backends[BACKEND].servers) do
    local stats = server:get_stats()
    if string.sub(stats.status, 1, 2) == "UP" then
      local score = mix(hashed ~ fnv1a(server:get_addr()))
      ready[#ready + 1] = {{name = name, score = score, load = stats.scur}}
      total = total + stats.scur
    end
  end
  if #ready == 0 then
    return nil
  end
  table.sort(ready, function(a, b) return math.ult(b.score, a.score) end)
  -- Each replica's share of the requests in flight (this one included), times FACTOR %.
  local bound = ((total + 1) * FACTOR + 100 * #ready - 1) // (100 * #ready)
  for _, replica in ipairs(ready) do
    if replica.load < bound then
      return replica.name
    end
  end
  return ready[1].name
end)
"""
