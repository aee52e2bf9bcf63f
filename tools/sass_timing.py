"""In-order issue time of a role's warps on one scheduler through a sequence of SASS instructions.

A warp issues its instructions in program order, as the control bits ptxas compiled into each
one say (tools/sass_mix.py reads them from the cubin): the next instruction waits the stall
count ptxas gave this one (which covers every fixed-latency dependence: ptxas counts those
cycles itself, and they include the issue rate of pipes narrower than a warp), and an
instruction waits for the scoreboards its wait mask names, each released when the
variable-latency instruction that set it has its result (or, for a read scoreboard, has read its
source registers, one FMA latency after issue). Without control bits (hand-made streams), an
instruction issues once the registers it reads are ready: a result is ready the producing
instruction's latency after it issued. The variable latencies come from a hardware profile
(`overlap calibrate` measures them with dependent chains): FP32/integer/conversion instructions
fma_latency_cycles, MUFU mufu_latency_cycles, global loads
l2_latency_cycles (an L2 hit), shared-memory and other loads lds_latency_cycles, shuffles
shfl_latency_cycles, mma.sync (HMMA) mma_sync_latency_cycles where measured; a barrier
(BAR.SYNC / BAR.RED) holds the warp's next instruction for bar_sync_latency_cycles (every warp
arriving at once), a fence.proxy.async (FENCE.VIEW.ASYNC.S) for fence_proxy_async_cycles.

The `warps` of one role that share a scheduler (a sub-partition) run the same instructions side
by side: they share its one issue slot per cycle, its quarter of the SM's SFU
(sfu_lanes_per_clk / 4) and its quarter of the SM's shared-memory pipe (smem_bytes_per_clk / 4,
SmemPort: the other three schedulers run the same code), so a role of two warps per scheduler
pays for both where its chain leaves no gaps. Other roles' warps on the scheduler:
SchedulerShare runs them beside the timed role's warps, each through its own per-chunk code once
a round, sharing all three (WarpClock leaves them out; the model then charges their issue slots
to the FMA pipe). Where the code a scheduler's warps cycle through each chunk outgrows its
instruction cache, its instructions stream in at the measured fetch-limited rate, shared by the
distinct code streams on the scheduler (warps of one role share theirs) and running ahead of the
warps (fetch_interval). Not modelled: waits at barriers beyond their own latency
(another warp's progress), HGMMA latency and shared-memory bank conflicts.
"""
import re

REG = re.compile(r"\b(U?R\d+|U?P\d)\b")
NO_DEST = ("ST", "STS", "STG", "STL", "STSM", "RED", "BAR", "BRA", "EXIT", "WARPSYNC", "BSSY", "BSYNC", "NOP",
           "MEMBAR", "FENCE", "DEPBAR", "ERRBAR", "CCTL", "WARPGROUP", "UTMALDG", "UTMASTG", "UTMAPF", "UBLKCP",
           "UTMACMDFLUSH", "CALL", "RET", "BREAK", "YIELD", "ACQBULK", "JMP", "BRX", "KILL", "NANOSLEEP")
LOADS = ("LDS", "LDSM", "LDL", "LDG", "LD", "LDC", "ULDC", "S2R", "S2UR", "CS2R", "ATOM", "ATOMS", "SYNCS")


def registers(operand, width):
    """The registers an operand names: R8 with width 2 is R8, R9."""
    out = []
    for name in REG.findall(operand):
        if name.startswith(("R", "UR")) and width > 1:
            prefix = "UR" if name.startswith("UR") else "R"
            n = int(name[len(prefix):])
            out += [f"{prefix}{n + i}" for i in range(width)]
        else:
            out.append(name)
    return out


def dest_width(opcode):
    parts = opcode.split(".")
    if "128" in parts[1:]:
        return 4
    if "64" in parts[1:] or "WIDE" in parts[1:]:
        return 2
    if parts[0] == "LDSM":
        return next((int(p) for p in parts[2:] if p in ("2", "4")), 1)
    if parts[0] in ("HMMA", "HGMMA"):
        return 4
    return 1


def latency(base, lat):
    if base == "MUFU":
        return lat["mufu"]
    if base == "HMMA" and "hmma" in lat:
        return lat["hmma"]  # mma.sync: its accumulator is ready this long after issue
    if base == "SHFL":
        return lat["shfl"]
    if base in ("LDG", "LD") and "ldg" in lat:
        return lat["ldg"]  # a global load served from L2 (the data a loop re-reads stays there)
    if base in LOADS:
        return lat["lds"]
    return lat["fma"]


SMEM = ("LDS", "LDSM", "STS", "STSM")


def access_bytes(opcode):
    """Bytes one warp moves with a shared-memory instruction."""
    parts = opcode.split(".")
    if parts[0] in ("LDSM", "STSM"):
        count = next((int(p) for p in parts[1:] if p in ("1", "2", "4") and p != parts[1]), 1)
        return 128 * count  # each 8x8 b16 matrix is 128 bytes
    width = 4
    for p in parts[1:]:
        if p in ("U8", "S8"):
            width = 1
        elif p in ("U16", "S16"):
            width = 2
        elif p == "64":
            width = 8
        elif p == "128":
            width = 16
    return 32 * width


def smem_bytes(base, opcode):
    """Bytes a warp's instruction moves through the SM's shared-memory pipe (0: not a shared access)."""
    return float(access_bytes(opcode)) if base in SMEM else 0.0


class SmemPort:
    """A scheduler's share of the SM's shared-memory pipe (lat["smem_port"] bytes a cycle: the
    SM's bandwidth over its four schedulers, whose warps run the same code). An access waits for
    the port and its data arrive the load latency after it leaves the port. Absent: no port."""

    def __init__(self, lat):
        self.rate, self.free = lat.get("smem_port"), 0.0

    def start(self, base, opcode, at):
        """When the port starts serving the access of an instruction issued at `at` (the queue
        wait adds to its latency; the measured latency includes one access's own transfer)."""
        n = smem_bytes(base, opcode)
        if not self.rate or not n:
            return at
        begin = max(at, self.free)
        self.free = begin + n / self.rate
        return begin


def hold(opcode, lat):
    """Cycles a barrier or proxy fence keeps its warp from issuing the next instruction."""
    if opcode.startswith(("BAR.SYNC", "BAR.RED")):
        return lat.get("bar", 0.0)
    if opcode.startswith("FENCE.VIEW.ASYNC"):
        return lat.get("fence", 0.0)
    return 0.0


def control(word):
    """(stall, write scoreboard, read scoreboard, wait mask) from an instruction's control bits
    (its encoding's top 23 bits, as the Volta through Hopper encodings place them): the cycles
    ptxas makes the warp wait before issuing its next instruction, the scoreboard (0-5; 7: none)
    released when its variable-latency result is written or its source registers have been read,
    and the scoreboards it waits for before issuing."""
    return word & 15, (word >> 5) & 7, (word >> 8) & 7, (word >> 11) & 63


def waits(ctrl, sources, ready):
    """When an instruction's inputs are ready: with its control bits, the scoreboards it waits
    for (fixed-latency dependences are in the stall counts ptxas gave the instructions before
    it); without, the registers it reads."""
    if ctrl is None:
        return [ready.get(r, 0.0) for r in sources]
    return [ready.get(("sb", b), 0.0) for b in range(6) if control(ctrl)[3] >> b & 1]


def gap(ctrl, opcode, lat):
    """Cycles from an instruction's issue until its warp may issue the next: its stall count (1
    without control bits), plus what a barrier or proxy fence holds it."""
    return (max(1, control(ctrl)[0]) if ctrl is not None else 1) + hold(opcode, lat)


def written(ctrl, base, dests, served, at, lat, ready):
    """Record when an instruction's results are ready: its scoreboards with control bits (its
    result the class latency after its shared-memory access is served, its source registers read
    one FMA latency after issue), else each register it writes."""
    if ctrl is None:
        for r in dests:
            ready[r] = served + latency(base, lat)
        return
    _, wr, rd, _ = control(ctrl)
    if wr != 7:
        ready[("sb", wr)] = max(ready.get(("sb", wr), 0.0), served + latency(base, lat))
    if rd != 7:
        ready[("sb", rd)] = max(ready.get(("sb", rd), 0.0), at + lat["fma"])


def parse(opcode, operands):
    """(base opcode, registers written, registers read) of one instruction."""
    base = opcode.split(".")[0]
    ops = [o.strip() for o in operands.split(",")] if operands.strip() else []
    width = dest_width(opcode)
    if base.startswith(NO_DEST) or not ops:
        dests, srcs = [], ops
    else:
        # The first operand is written; so is the second where both are predicates
        # (ISETP P0, PT, ...) or the form is SHFL's (PT, R8, ...: predicate and value).
        pred = lambda o: re.fullmatch(r"U?P\d|U?PT", o) is not None
        n = 2 if len(ops) > 1 and pred(ops[0]) and (pred(ops[1]) or base == "SHFL") else 1
        dests = [r for o in ops[:n] for r in registers(o, width)]
        srcs = ops[n:]
    return base, dests, [r for o in srcs for r in registers(o, 1 if "[" in o else width)]


class WarpClock:
    """Feed instructions in program order (with their control bits where known); `cycles` is the
    time the last one issued, plus one, plus what a final barrier holds. `warps` warps of the
    same role on one scheduler issue each instruction in turn."""

    def __init__(self, lat, warps=1):
        self.lat, self.mufu_free, self.port_free = lat, 0.0, 0.0
        self.smem = SmemPort(lat)
        self.fetched = 0  # instructions of the code stream fetched so far (its warps share them)
        self.next = [0.0] * warps  # when each warp may issue again
        self.end = 0.0
        self.ready = [{} for _ in range(warps)]

    def issue(self, opcode, operands, ctrl=None):
        base, dests, sources = parse(opcode, operands)
        if base == "NOP":
            return
        # Code past the instruction cache streams in at the fetch rate, ahead of the warps.
        fetched_at = self.fetched * self.lat.get("fetch_interval", 0.0)
        self.fetched += 1
        for w, ready in enumerate(self.ready):
            t = max([self.next[w], self.port_free, fetched_at] + waits(ctrl, sources, ready))
            if base == "MUFU":
                t = max(t, self.mufu_free)
                self.mufu_free = t + 32.0 / self.lat["sfu_lanes_per_smsp"]
            self.port_free = t + 1
            written(ctrl, base, dests, self.smem.start(base, opcode, t), t, self.lat, ready)
            self.next[w] = t + gap(ctrl, opcode, self.lat)
            self.end = max(self.end, t + 1 + hold(opcode, self.lat))

    @property
    def cycles(self):
        return self.end


class SchedulerShare:
    """The warps one scheduler (SM sub-partition) holds, each running its role's per-chunk code
    (a list of (opcode, operands)) round after round: `warps` warps of the timed code and one warp
    of each code in `others`. Each cycle the scheduler issues one instruction, of the warp whose
    next instruction has been ready longest (ties: round robin from the warp after the last one
    issued); MUFU instructions also wait for the scheduler's SFU quarter. The other warps start a
    round only once the timed warps have (the roles' hand-offs keep them one chunk apart), so that
    each issues its code once per round. `cycles` is the timed warps' steady-state time per round."""

    def __init__(self, lat, timed, warps=1, others=(), rounds=8):
        self.lat, self.rounds = lat, rounds
        codes = [timed] * warps + list(others)
        # Instructions are (opcode, operands) or (opcode, operands, control bits).
        self.codes = [[(i[0], parse(i[0], i[1]), i[2] if len(i) > 2 else None) for i in code
                       if i[0].split(".")[0] != "NOP"] for code in codes]
        self.timed = warps
        if not self.codes[0]:
            raise ValueError("SchedulerShare: the timed code has no instructions")

    @property
    def cycles(self):
        lat, codes, n = self.lat, self.codes, len(self.codes)
        pc, t, ready = [0] * n, [0.0] * n, [{} for _ in range(n)]
        # The fetch rate is shared by the distinct code streams: the timed role's (its warps share
        # it) and each other role's.
        fetch = lat.get("fetch_interval", 0.0) * (1 + n - self.timed)
        ends = [[] for _ in range(self.timed)]  # when each timed warp finished each round
        port = mufu = 0.0
        smem = SmemPort(lat)
        last = -1
        timed_len = len(codes[0])
        while pc[0] < self.rounds * timed_len:
            best = None
            for i in range(n):
                code = codes[i]
                if not code or (i >= self.timed and pc[i] // len(code) > pc[0] // timed_len):
                    continue  # nothing to run, or this round's code done before the timed warps' next round
                op, (base, dests, sources), ctrl = code[pc[i] % len(code)]
                at = max([t[i], port, pc[i] * fetch] + waits(ctrl, sources, ready[i]))
                if base == "MUFU":
                    at = max(at, mufu)
                key = (at, (i - last - 1) % n)
                if best is None or key < best[0]:
                    best = (key, i, op, base, dests, ctrl)
            (at, _), i, op, base, dests, ctrl = best
            if base == "MUFU":
                mufu = at + 32.0 / lat["sfu_lanes_per_smsp"]
            port = at + 1
            t[i] = at + gap(ctrl, op, lat)
            written(ctrl, base, dests, smem.start(base, op, at), at, lat, ready[i])
            pc[i] += 1
            last = i
            if i < self.timed and pc[i] % timed_len == 0:
                ends[i].append(at + 1)
        rounds = [max(e) for e in zip(*ends)]  # a round ends when its last timed warp does
        half = len(rounds) // 2
        return (rounds[-1] - rounds[half - 1]) / (len(rounds) - half)


def fetch_interval(lat, code_KiB):
    """Cycles per instruction at which a lone code stream is fetched where a scheduler's warps
    cycle through `code_KiB` of code each chunk: 0 (no limit) while it fits the nearest
    instruction cache, else the inverse of the measured fetch-limited issue rate (overlap
    calibrate's fetch_rate.cu, whose two roles of different code shared it)."""
    near, far = lat.get("icache_near_KiB", 0), lat.get("icache_far_KiB", 0)
    if not near or code_KiB <= near:
        return 0.0
    rate = lat["fetch_far_issue_per_clk"] if code_KiB <= far else lat["fetch_l2_issue_per_clk"]
    return 1.0 / rate


def latencies_from_profile(profile):
    """The latencies (cycles) from a profile JSON object ({"fields": {name: {"value": ...}}})."""
    f = profile["fields"]
    value = lambda k: float(f[k]["value"])
    # mma.sync's latency where measured (0: not measured; its results are then taken as ready at
    # the FMA latency, as before the field existed).
    hmma = {"hmma": value("mma_sync_latency_cycles")} if float(f.get("mma_sync_latency_cycles", {}).get("value", 0)) > 0 else {}
    fetch_keys = ("icache_near_KiB", "icache_far_KiB", "fetch_far_issue_per_clk", "fetch_l2_issue_per_clk")
    fetch = {k: value(k) for k in fetch_keys} if all(float(f.get(k, {}).get("value", 0)) > 0 for k in fetch_keys) else {}
    return {"fma": value("fma_latency_cycles"), "mufu": value("mufu_latency_cycles"), "lds": value("lds_latency_cycles"),
            "shfl": value("shfl_latency_cycles"), "sfu_lanes_per_smsp": value("sfu_lanes_per_clk") / 4,
            "lds_beside_wgmma": value("lds_latency_beside_wgmma_cycles"), "ldg": value("l2_latency_cycles"),
            "bar": value("bar_sync_latency_cycles"), "fence": value("fence_proxy_async_cycles"),
            "smem_port": value("smem_bytes_per_clk") / 4, **hmma, **fetch}


def loaded(lat):
    """The latencies while wgmma streams shared-memory operands on the SM: slower shared loads."""
    return dict(lat, lds=lat["lds_beside_wgmma"])
