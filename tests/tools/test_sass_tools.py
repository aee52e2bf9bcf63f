"""tools/sass_timing.py and tools/sass_mix.py on hand-made instruction streams: what a barrier or
proxy fence costs a warp's chain, and which loop bodies a `.loop` / `.loops` region counts."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import sass_mix  # noqa: E402
import sass_timing  # noqa: E402

LAT = {"fma": 4.0, "mufu": 17.0, "lds": 23.0, "shfl": 26.0, "sfu_lanes_per_smsp": 4.0, "lds_beside_wgmma": 100.0,
       "ldg": 283.0, "bar": 32.0, "fence": 13.0}


def chain(*instructions, lat=LAT):
    clock = sass_timing.WarpClock(lat)
    for opcode, operands in instructions:
        clock.issue(opcode, operands)
    return clock.cycles


def test_a_barrier_holds_the_next_instruction_for_its_latency():
    plain = chain(("FADD", "R1, R2, R3"), ("FADD", "R4, R5, R6"))
    with_bar = chain(("FADD", "R1, R2, R3"), ("BAR.SYNC.DEFER_BLOCKING", "0x1, 0x80"), ("FADD", "R4, R5, R6"))
    assert with_bar - plain == 1 + LAT["bar"]


def test_a_proxy_fence_holds_the_next_instruction_for_its_cost():
    plain = chain(("STS", "[R1], R2"), ("FADD", "R4, R5, R6"))
    fenced = chain(("STS", "[R1], R2"), ("FENCE.VIEW.ASYNC.S", ""), ("FADD", "R4, R5, R6"))
    assert fenced - plain == 1 + LAT["fence"]


def ctrl(stall=1, write=7, read=7, wait=()):
    """Control bits as ptxas encodes them (sass_timing.control decodes them)."""
    return stall | write << 5 | read << 8 | sum(1 << b for b in wait) << 11


def timed(*instructions, lat=LAT):
    clock = sass_timing.WarpClock(lat)
    for opcode, operands, bits in instructions:
        clock.issue(opcode, operands, bits)
    return clock.cycles


def test_control_bits_decode_as_ptxas_writes_them():
    # An ISETP of sm_90a code that waits for scoreboard 1 and holds its warp 13 cycles.
    assert sass_timing.control(0x002FDA0003F25270 >> 41) == (13, 7, 7, 0b10)
    assert sass_timing.control(ctrl(5, 2, 3, (0, 4))) == (5, 2, 3, 0b10001)


def test_with_control_bits_the_stall_counts_space_the_chain():
    # Independent instructions that ptxas spaced 6 cycles apart (e.g. a pipe's issue rate): the
    # registers say nothing depends, the stall counts say when the next may go.
    spaced = [("IMAD", f"R{i}, R20, R21, RZ", ctrl(6)) for i in range(4)]
    assert timed(*spaced) == 3 * 6 + 1
    assert chain(*[(op, ops) for op, ops, _ in spaced]) == 4


def test_with_control_bits_a_variable_latency_result_is_waited_for_on_its_scoreboard():
    # The load sets scoreboard 2; the FADD waits for it (its registers are not looked at).
    load = ("LDS", "R1, [R40]", ctrl(1, write=2))
    use = ("FADD", "R50, R7, R8", ctrl(1, wait=(2,)))
    assert timed(load, use) == 1 + LAT["lds"]
    assert timed(load, ("FADD", "R50, R1, R8", ctrl(1))) == 2  # no wait bit: no wait
    # A store's read scoreboard frees its source registers one FMA latency after issue.
    store = ("STS", "[R40], R1", ctrl(1, read=0))
    assert timed(store, ("MOV", "R1, R2", ctrl(1, wait=(0,)))) == LAT["fma"] + 1


def test_without_the_profile_fields_barriers_cost_only_their_issue_slot():
    lat = {k: v for k, v in LAT.items() if k not in ("bar", "fence")}
    assert chain(("BAR.SYNC.DEFER_BLOCKING", "0x1, 0x80"), ("FADD", "R4, R5, R6"), lat=lat) == 2


def stream(regions):
    """(offset, opcode, operands, region) rows; a row whose opcode is 'BRA:N' branches back to row N."""
    rows, labels = [], {}
    for i, (opcode, region) in enumerate(regions):
        if opcode.startswith("BRA:"):
            target = int(opcode[4:])
            labels[f".L_x_{target}"] = target
            rows.append((i * 16, "BRA", f"`(.L_x_{target})", region, None))
        else:
            rows.append((i * 16, opcode, "R1, R2, R3", region, None))
    return rows, labels


def test_a_loops_region_counts_every_loop_body_and_a_loop_region_the_longest():
    body = ["FADD"] * 3
    rows = [("FADD", "r.x.loops")] + [(o, "r.x.loops") for o in body] + [("BRA:1", "r.x.loops"), ("FMUL", "r.x.loops")]
    rows += [(o, "r.x.loops") for o in ["FADD"] * 5] + [("BRA:6", "r.x.loops")]
    instrs, labels = stream(rows)
    bodies = sass_mix.loop_bodies(instrs, labels)
    assert bodies["r.x.loops"] == [(1, 4), (6, 11)]
    single = [(o, r.replace(".loops", ".loop")) for o, r in rows]
    instrs, labels = stream(single)
    assert sass_mix.loop_bodies(instrs, labels)["r.x.loop"] == [(6, 11)]


def test_a_loops_body_may_hold_a_few_instructions_of_other_regions_but_a_loop_body_may_not():
    rows = [("FADD", "r.y.loops")] * 10 + [("FMUL", "other")] + [("BRA:0", "r.y.loops")]
    instrs, labels = stream(rows)
    assert sass_mix.loop_bodies(instrs, labels)["r.y.loops"] == [(0, 11)]
    strict = [(o, r.replace(".loops", ".loop")) for o, r in rows]
    instrs, labels = stream(strict)
    assert "r.y.loop" not in sass_mix.loop_bodies(instrs, labels)


def test_a_warp_beside_a_dependent_chain_fills_its_gaps():
    # Ten dependent FADDs leave three of every four issue slots free: another role's warp with
    # ten independent instructions a round runs in them, and the chain takes as long as alone.
    chain10 = [("FADD", "R1, R1, R2")] * 10
    other = [("IADD3", "R5, R6, R7, RZ")] * 10
    alone = sass_timing.SchedulerShare(LAT, chain10).cycles
    assert alone == 10 * LAT["fma"]
    assert sass_timing.SchedulerShare(LAT, chain10, 1, [other]).cycles == alone


def test_warps_that_issue_every_cycle_share_the_slot():
    # Independent instructions issue one a cycle: a second warp of the same code, or another
    # role's warp of as many instructions, doubles the time per round.
    independent = [("FADD", f"R{i}, R20, R21") for i in range(10)]
    assert sass_timing.SchedulerShare(LAT, independent).cycles == 10
    assert sass_timing.SchedulerShare(LAT, independent, 2).cycles == 20
    assert sass_timing.SchedulerShare(LAT, independent, 1, [independent]).cycles == 20


def test_other_roles_run_their_code_once_a_round():
    # A long other role does not slow the timed one beyond its own instruction count a round:
    # its warp waits for the timed warps' next round before it starts its own again.
    independent = [("FADD", f"R{i}, R20, R21") for i in range(10)]
    short_other = [("IADD3", "R5, R6, R7, RZ")] * 5
    assert sass_timing.SchedulerShare(LAT, independent, 1, [short_other]).cycles == 15


def test_mufu_of_all_warps_shares_the_scheduler_sfu_quarter():
    # 32 lanes at 4 lanes a clock: a MUFU every 8 cycles, whichever warp issues it.
    exps = [("MUFU.EX2", f"R{i}, R20") for i in range(8)]
    assert sass_timing.SchedulerShare(LAT, exps).cycles == 8 * 8
    assert sass_timing.SchedulerShare(LAT, exps, 1, [exps]).cycles == 2 * 8 * 8


def test_a_beside_spec_names_its_row_and_groups():
    assert sass_mix.parse_beside("g.full=g.a+g.b/o.c/s.d+s.e") == ("g.full", [["g.a", "g.b"], ["o.c"], ["s.d", "s.e"]])
    for bad in ("g.full", "g.full=g.a", "=g.a/o.c", "g.full=g.a//o.c"):
        try:
            sass_mix.parse_beside(bad)
        except ValueError as e:
            assert bad in str(e)
        else:
            raise AssertionError(f"{bad!r} was accepted")


def test_a_region_counts_its_instructions_in_its_loop_not_the_ones_hoisted_out():
    # Rows 0-1 of region r run once (hoisted before the loop), rows 2-5 every pass (the loop
    # branches back from row 5 to row 2): only the loop's count per pass.
    rows = [("IMAD", "g.r"), ("LOP3", "g.r"), ("FADD", "g.r"), ("FMUL", "g.r"), ("FADD", "other.x"), ("BRA:2", "g.r")]
    instrs, labels = stream(rows)
    assert sass_mix.per_pass(instrs, labels) == {"g.r": {2, 3, 5}}
    # A region wholly inside its loop, or with no loop at all, keeps every instruction.
    assert "other.x" not in sass_mix.per_pass(instrs, labels)
    straight, no_labels = stream([("IMAD", "g.s"), ("FADD", "g.s")])
    assert sass_mix.per_pass(straight, no_labels) == {}


def test_shared_loads_queue_for_the_schedulers_share_of_the_pipe():
    # 128-bit loads move 512 bytes a warp: at 32 bytes a cycle the port takes 16 cycles each, so
    # the fourth independent load is served 48 cycles after the first and its result is ready
    # the load latency later.
    loads = [("LDS.128", f"R{4 * i}, [R40]") for i in range(4)]
    use = ("FADD", "R50, R12, R13")
    unported = chain(*loads, use)
    ported = chain(*loads, use, lat=dict(LAT, smem_port=32.0))
    assert unported == 3 + LAT["lds"] + 1  # the last load issues at cycle 3
    assert ported == 3 * 16 + LAT["lds"] + 1
    # Loads far enough apart never queue.
    spaced = [("LDS", "R1, [R40]")] + [("FADD", f"R{i}, R20, R21") for i in range(2, 10)] + [("LDS", "R10, [R40]")]
    assert chain(*spaced, lat=dict(LAT, smem_port=32.0)) == chain(*spaced)


def test_mma_sync_results_are_ready_after_its_measured_latency():
    mmas = [("HMMA.16816.F32.BF16", "R4, R8, R12, R4"), ("HMMA.16816.F32.BF16", "R4, R8, R12, R4")]
    assert chain(*mmas) == LAT["fma"] + 1
    assert chain(*mmas, lat=dict(LAT, hmma=24.0)) == 24.0 + 1


FETCH = {"icache_near_KiB": 32.0, "icache_far_KiB": 128.0, "fetch_far_issue_per_clk": 0.5,
         "fetch_l2_issue_per_clk": 0.25}


def test_code_past_the_instruction_cache_streams_in_at_the_measured_rate():
    assert sass_timing.fetch_interval(FETCH, 32) == 0.0
    assert sass_timing.fetch_interval(FETCH, 33) == 2.0
    assert sass_timing.fetch_interval(FETCH, 129) == 4.0
    assert sass_timing.fetch_interval({}, 500) == 0.0  # not measured: no limit


def test_warps_of_one_role_share_a_fetch_stream_and_roles_split_it():
    independent = [("FADD", f"R{100 + i}, R20, R21") for i in range(100)]
    lat = dict(LAT, fetch_interval=2.0)
    # One warp: an instruction every 2 cycles (the fetch), not every cycle.
    assert chain(*independent, lat=lat) == 99 * 2 + 1
    # Two warps of the same code take turns on the issue slot behind one stream: 2 a fetch.
    clock = sass_timing.WarpClock(lat, 2)
    for op, ops in independent:
        clock.issue(op, ops)
    assert clock.cycles == 99 * 2 + 2
    # Two roles of different code: two streams, each at half the rate.
    alone = sass_timing.SchedulerShare(lat, independent).cycles
    beside = sass_timing.SchedulerShare(lat, independent, 1, [independent]).cycles
    assert alone == 200
    assert beside == 400


def test_register_counts_come_from_the_regcount_attribute():
    import kernel_registers
    out = """	//----- nvinfo : EIATTR_REGCOUNT
	.align		4
        /*0000*/ 	.byte	0x04, 0x2f
        /*0002*/ 	.short	(.L_1 - .L_0)
	.align		4
.L_0:
        /*0004*/ 	.word	index@(_Z6kernelILi64EEvv)
        /*0008*/ 	.word	0x0000003f
	//----- nvinfo : EIATTR_MAX_THREADS
        /*000c*/ 	.word	index@(_Z6kernelILi64EEvv)
        /*0010*/ 	.word	0x00000100
"""
    assert kernel_registers.parse_registers(out) == {"_Z6kernelILi64EEvv": 63}
    assert kernel_registers.parse_registers(out, "ILi128") == {}
