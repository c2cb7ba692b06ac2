"""GPU presets.

Every field carries its unit in its name and a source in the comment beside it.
Source tags are those of shared/HARDWARE.md: [M] measured on the project's H200
(re-measured records live under traces/hw/h200/micro/), [PG] Nsight Compute
Profiling Guide, [CC] CUDA Programming Guide compute-capability tables,
[OCC] cuda_occupancy.h, [F-n] NVIDIA developer forum thread n, [DS] vendor
datasheet. "(unverified)" marks a figure from a single secondary source.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, fields, replace

from gpusim.errors import GpusimError


@dataclass(frozen=True)
class GPU:
    name: str
    sm_version: int                      # compute capability * 10

    # --- SM structure ---
    sm_count: int                        # streaming multiprocessors
    smsp_per_sm: int                     # sub-partitions (one warp scheduler each) [PG]
    warp_size_threads: int
    max_warps_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    regs_per_sm: int                     # 32-bit registers
    max_regs_per_thread: int
    reg_alloc_unit_per_warp: int         # registers/warp rounded up to this [OCC]
    shared_per_sm_bytes: int             # carveout maximum
    shared_per_block_optin_bytes: int    # dynamic shared-memory opt-in limit per block
    shared_per_block_static_bytes: int   # static __shared__ limit per block
    shared_reserved_per_block_bytes: int  # system use per CTA [OCC]
    shared_alloc_unit_bytes: int         # allocation granularity [OCC]
    shared_banks: int                    # 4-byte banks
    l1_shared_total_bytes: int           # unified L1 + shared per SM
    l2_bytes: int

    # --- clocks and bandwidth ---
    sm_clock_max_mhz: float
    dram_bandwidth_gbps: float           # GB/s (1e9 B/s), datasheet/derived peak
    fp32_lanes_per_smsp: int

    # --- latencies, cycles at the SM clock ---
    ffma_dependent_latency_cycles: float
    lds_latency_cycles: float
    l1_hit_latency_cycles: float
    l2_hit_latency_cycles: float
    dram_latency_ns: float               # fixed in ns: fewer SM cycles at a lower clock

    # --- pipe and queue rates ---
    issue_per_smsp_per_cycle: float      # warp-instructions
    fma_pipe_warp_inst_per_smsp_cycle: float  # heavy + lite together
    shared_wavefronts_per_sm_cycle: float
    l1_requests_per_sm_cycle: float
    l1_sectors_per_sm_cycle: float
    sector_bytes: int
    line_bytes: int

    # --- timing engine (gpusim/timing, issue 4): integer cycles at the SM clock. Defaults are the
    # H200's; "(unverified)" figures are guesses to be replaced by microbenchmarks. ---
    fma_subpipe_issue_interval_cycles: int = 2  # [M] pipe_fma peak 1.0/SMSP = heavy 0.5 + lite 0.5 [F-302018]
    alu_issue_interval_cycles: int = 2      # [M] micro/fma_issue_rate.json IADD3 0.49-0.50 warp-inst/cycle/SMSP
    xu_issue_interval_cycles: int = 8       # [M] micro/shfl_mufu.json: MUFU.EX2 0.50 warp-inst/cycle/SM (0.125/SMSP)
    imad_latency_cycles: int = 4            # [M] micro/latency_imad.json 4.05
    alu_latency_cycles: int = 4             # [M] micro/latency_iadd3.json 4.04 (IADD3; LOP3/ISETP taken equal)
    xu_latency_cycles: int = 17             # [M] micro/shfl_mufu.json: MUFU.EX2 chain 17.0 (conversions taken equal)
    # [M] micro/shfl_mufu.json: a chain of SHFL.BFLY, 24.0 cycles each (from the shared pipe's take); its rate,
    # 0.98 a cycle per SM, is the pipe's cycle a shuffle takes (shfl_shared_pipe_cycles)
    shfl_latency_cycles: int = 24
    # [M] micro/special_regs.json: a consumer waits 24.75 cycles for S2R (26.0 with a uniform consumer) and
    # 28.0 for a constant-cache hit (LDC R, c[][R]); both on a scoreboard (short_scoreboard). S2UR taken equal
    # to S2R, and an LDC of a fixed address (a kernel's parameters: LDC R, c[0x0][imm]) to the indexed one.
    s2r_latency_cycles: int = 25
    ldc_latency_cycles: int = 28
    # [PG] the LSU pipe "also issues special register reads (S2R), shuffles": S2R and SHFL wait in the SMSP's
    # MIO queue, in order behind its shared loads (the H200's PC samples of transpose_smem at 4096: 15.4 % of
    # warp cycles at its S2R in mio_throttle, none at its S2UR: the uniform datapath's read stays outside).
    # [M] micro/mio_special.json: 32 SHFL beside 4 shared loads of 32 wavefronts cost a warp-step the sum of
    # the two alone (160.2 cycles against 128.1 + 32.8): a shuffle takes one cycle of the shared pipe; 16
    # S2R / S2UR cost none (128.3: their own unit)
    special_ops_through_mio: bool = True
    shfl_shared_pipe_cycles: int = 1
    other_latency_cycles: int = 4           # (unverified) uniform (ULDC too), ADU (but S2R, S2UR, LDC) and CBU results
    # [M] micro/mio_queue_depth.json: one warp stalls with 31 LDS in flight (1 in the shared pipe,
    # 30 queued); four warps, one per SMSP, with 13.2 each: 53 in flight in the SM, 52 queued
    mio_queue_depth: int = 30               # [M] instructions per SMSP (micro/mio_queue_depth.json)
    mio_sm_queue_depth: int = 52            # [M] all SMSPs together (micro/mio_queue_depth.json)
    # [M] micro/lg_queue_depth.json: one warp stalls with 36.9 LDG in flight, four warps with 23.3 each
    lg_queue_depth: int = 36                # [M] instructions per SMSP (micro/lg_queue_depth.json)
    lg_sm_queue_depth: int = 92             # [M] all SMSPs together (micro/lg_queue_depth.json)
    # [M] ncu's count of the loads pending in the LSU pipe: with L1 hits the SM holds at most 64-66
    # global loads (micro/queue_warps_lsu_ncu.json, lg_throughput_lsu.json), with misses many more
    # (traces/hw/h200/lsu/: coalesced 236), so: at most 64 global instructions L1TEX has not taken,
    # beside the 92 entries until return; 64 of 56-72 on micro/queue_warps_ncu.json's LDG rows
    # (tests/timing/test_queue_warps.py, test_queue_bursts.py); 0 = no such cap
    lg_sm_untaken_depth: int = 64
    # [M] an L1 miss leaves its LG queue and pool entry when L1TEX sends it on to the L2 and holds one of the
    # SM's miss entries, and a sector entry per sector, until its fill lands (0 = none: a miss holds its LG
    # entry until its data returns). micro/l1_misses.json (streams of misses from the L2 or DRAM, 16-64 warps):
    # one-sector requests 221-235 in flight per SM (the entries: 176 in the engine, which holds 232-234 with
    # the queue's untaken loads), one-line ones (4 sectors) 203-240 like micro/l1_dense.json's G = 1 rows
    # (engine 218-238), two-line ones (8 sectors) 148-153: 704 sectors (engine 151); l2_requests.json's 16 and
    # 32 one-sector lines a request stay bandwidth-bound (a cap of lines would hold them to 11)
    lg_sm_miss_depth: int = 176
    lg_sm_miss_sectors: int = 704
    l2_to_l1_bytes_per_sm_cycle: int = 128  # [M] ncu peak, HARDWARE.md s.2
    # [M] micro/barrier_cost.json: 14.16 / 16.16 / 20.16 / 28.16 / 44.17 / 76.17 cycles per barrier
    # for 1 / 2 / 4 / 8 / 16 / 32 warps = 12 + 2 x warps: arrivals processed one per 2 cycles,
    # release 12 cycles after the last one
    bar_sync_release_cycles: int = 12       # [M] micro/barrier_cost.json
    bar_sync_arrive_cycles: int = 2         # [M] micro/barrier_cost.json
    # L1TEX data stage: one 128-B line (4 sectors of one line) per cycle, as the shared data
    # stage's 128 B/cycle [M] and ncu's L2->L1 128 B/cycle peak; micro/lg_queue_depth.json's
    # four-warp bursts of 32-line L1 hits drain at 0.8 lines/cycle (not used: queue-limited?)
    l1_data_lines_per_cycle: int = 1        # (unverified peak) lines per cycle per SM
    # [M] micro/fma_issue_rate.json (+ fma_pipes_ncu.json): 8 warps/SMSP with 1 / 2 / 4 independent
    # FFMA chains each issue 0.49 / 0.66 / 0.97 warp-inst/cycle/SMSP (1 warp with 4: 0.91): an FP32
    # instruction cannot dispatch in the cycle after another warp's issue on the same SMSP (no
    # operand reuse across warps; ncu shows the bubble as dispatch_stall). micro/fma_operands.json:
    # only FFMAs reading three registers; with an immediate operand 0.92 / 0.96 (no bubble)
    fma_warp_switch_bubble: bool = True     # [M] micro/fma_issue_rate.json
    # [M] micro/ffma_dispatch.json: a lone warp's independent FFMAs stall at dispatch where their register
    # reads outrun the SMSP's two register banks (one read each a cycle, reuse-cache hits free): a trip of
    # 64 takes 84-122 cycles by operand pattern. The reads may start the cycle before issue and end up to
    # this many cycles after it (timing/register_banks.py). Chosen among 0-3 on the patterns' counts of
    # stalled FFMAs (summed miss 18 against 37 / 20 / 22 for 0 / 2 / 3; their trip times fit 0 a little
    # better: 3 cycles summed miss against 10). Applies only to rows carrying the SASS's reads.
    register_read_lead_cycles: int = 1      # [M] micro/ffma_dispatch.json
    # [M] micro/launch_overhead.json: an empty kernel's launch between two CUDA events, queued behind other
    # work as the ladder's timed launches are, 3.55 us (1 CTA; 3.6-4.3 us up to 1024 CTAs, more with more
    # CTAs as the block scheduler hands them out, which a kernel with work does while it runs). What a
    # recorded time holds besides the kernel's work; the prediction adds it to the engine's cycles.
    launch_overhead_us: float = 3.55
    # [M] micro/cta_turnaround.json: 256-thread CTAs that do nothing, launched 1 to 65536 at a time: past one
    # round, each CTA more per SM adds 79.3 ns (the largest grids' slope). The block scheduler hands an SM a
    # new CTA at most this often: the first round's CTAs start this far apart, and a round of r CTAs takes
    # at least r times it (gpusim.estimate.kernel_time.schedule_cycles). 0: CTAs start at once.
    cta_dispatch_ns: float = 79.3
    # [M] micro/cta_turnaround.json: CTAs spinning 1000 or 4000 cycles, 8 resident per SM: each CTA more per
    # SM adds (spin + 205 / 197 ns) / 8: a CTA slot stands empty this long between one CTA's end and the
    # next one's start. 0: no gap.
    cta_slot_gap_ns: float = 201.2
    # [M] micro/launch_end.json: the first round's CTAs start within about this much a CTA of the whole chip
    # (the last of 1056 chase CTAs, 8 an SM, 352 ns after the first; 128-160 ns for 264-528): the block
    # scheduler fills a launch's first round faster than it refills a slot (cta_dispatch_ns). Least squares
    # through zero over the chase launches of 264 CTAs or more. 0: the first round as cta_dispatch_ns paces it.
    cta_first_round_ns: float = 0.326
    # [M] micro/launch_end.json: the next kernel starts this much later after the last CTA of a launch that
    # spans every SM than after a lone CTA (the median over launches of 128-1056 CTAs that touch memory;
    # spin CTAs without memory work: about 100-130 ns). Grows with the SMs a launch reaches. 0: none.
    launch_end_ns: float = 224.0
    # [M] micro/one_round.json: CTAs that chase dependent L2 hits (nothing else), 2 to 264 of them launched at
    # once: the slowest CTA's cycles over the median CTA's grow with the CTAs as the largest of n draws of a
    # normal spread does, with this standard deviation (its share of the L2 latency; the least-squares fit
    # over 16 launches). A launch whose CTAs are all resident at once ends with its slowest, so its busiest
    # SM's L2 hits are timed at the latency of the slowest of its n CTAs' SMs
    # (gpusim.estimate.kernel_time.slowest_l2_latency). 0: every SM alike.
    sm_l2_latency_spread: float = 0.0272
    # [M] micro/atomic_contention.json: one atomicAdd (RED) per CTA to one shared address, 132 to 65536 CTAs:
    # each CTA more adds 1.755 ns (0.60 to an address of its own: the dispatch limit). The L2 applies
    # same-address atomics one after another, this far apart (gpusim.estimate.atomic_queue). 0: no queue.
    atomic_same_address_ns: float = 1.755
    # [M] micro/l2_resident.json: the largest working set a streaming kernel (a float4 copy, launched again and
    # again) still finds in the L2: 40 MB of the 60 (48 for reads alone; from 56 MB on, DRAM's rate)
    l2_stream_resident_bytes: int = 40 * 2**20
    # [M] ncu's launch__registers_per_thread on the H200: 16 where ptxas gives fewer (copy4 14, saxpy 10,
    # reduce_smem 12, reduce_atomic 13, reduce_shfl 14; traces/hw/h200/*_4096.json): a launch takes at least 16
    min_regs_per_thread: int = 16
    # [M] micro/bandwidth_l2.json, chip-wide L2 read; also what one SM's single-sector requests to 32 lines get
    # (micro/l2_requests.json: 28 B a cycle). Whole-line reads go faster: 8585 GB/s in
    # micro/bandwidth_pattern.json, 9692 in loaded_latency.json's streams (a sector rate and a line rate the
    # engine does not tell apart yet)
    l2_bandwidth_gbps: float = 7368.9
    # [M] micro/bandwidth_pattern.json: chip-wide reads of float4 .cg loads by 528 x 512 threads, 4 in flight a
    # thread, each launch timed queued behind a spin kernel as the kernel records are; the best of the two
    # address patterns (grid-stride 4661, per-CTA slices 4699; 264 MB-4.1 GB). micro/bandwidth_dram.json
    # (4329) timed the same kind of read one launch at a time; loaded_latency.json's streams reach 4725
    dram_achieved_bandwidth_gbps: float = 4699.0
    # [M] micro/loaded_latency_writes.json: a DRAM read's latency rises with the DRAM writes the chip carries
    # (a dependent chase beside streams that store or copy; reads alone: +4 % at 2.3 TB/s): by
    # dram_write_latency_cycles_per_tbps x the TB/s written + dram_mix_latency_cycles_per_tbps2 x TB/s read x
    # TB/s written, cycles (kernel_time.dram_write_rise). Least squares over the record's store and copy
    # points under 60 % of dram_achieved_bandwidth_gbps, where the engine's bandwidth queues add little
    # (calibrate/loaded_latency_writes.py: write_latency_fit). 0 and 0: no rise
    dram_write_latency_cycles_per_tbps: float = 152.2
    dram_mix_latency_cycles_per_tbps2: float = 67.6
    # [M] micro/bandwidth_dram.json details: a device-to-device copy (cupy.copyto, 2 GiB), bytes read +
    # written per second; with the read figure it sets what a DRAM write costs (timing.lower)
    dram_copy_bandwidth_gbps: float = 4101.1
    # [M] micro/l2_write.json: global stores into the L2 (the data stays there), chip-wide sectors per second,
    # marginal between 8 and 16 MB: whole sectors (float4), 4 B in each sector of a line, 4 B in one sector
    # per 128-B line (a strided store, as a naive transpose's); 0: stores cost the L2 nothing
    l2_write_gsectors_per_s: float = 146.29
    # [M] micro/l2_write.json: a copy within the L2 reads plus writes 8,192 GB/s, what its loads alone reach
    # (stores alone 4,681): a store's bytes take the bandwidth the reads' fills go through (timing.memory_path)
    l2_writes_share_read_bandwidth: bool = True
    l2_partial_sector_write_gsectors_per_s: float = 110.70
    l2_partial_line_write_gsectors_per_s: float = 49.95
    # [M] micro/l2_write_fill.json: the same 4-B stores, one sector per line, where the CTA's other warps fill
    # those sectors at once (a naive transpose's stores, its loads left out): sector writes per second
    l2_filled_line_write_gsectors_per_s: float = 60.91
    # [M] micro/store_load_wait.json: a naive transpose's warps, clock64 around each step, wait for a load's
    # data after it issued (9,100 cycles a warp) more than at its issue (2,000), the data 3,200-3,400 cycles
    # late once stores are ahead of it: an SM's requests reach the L2 in order, an L1 miss behind the stores
    # the SM sent before it (at the write rates above), and a store's LG entry frees once L1TEX has sent it
    # on. False: a store holds its entry until the L2 took it, and loads do not wait for stores
    l2_requests_in_order: bool = True
    # [M] micro/store_load_wait.json: the SM's path to the L2 holds this many sectors of stores the L2 has
    # not taken; L1TEX sends a store on (and takes nothing else) only when it has room. Of
    # 0-1024, 64 brings the engine's load-issue waits at the micro's 6 CTAs an SM nearest the H200's (1,920
    # cycles a warp against 2,030; 0: 2,520, 256: 1,180; tests/timing/test_store_load_wait.py)
    l2_write_buffer_sectors: int = 64
    # [M] micro/lg_throughput.json: a global load that hits L1 costs one L1TEX data-stage wavefront per
    # distinct 128-B line it touches (ncu l1tex__data_pipe_lsu_wavefronts_mem_lgds = D exactly), and
    # the stage retires 0.987-0.998 wavefronts per SM cycle for D = 4..32 lines per request (64 warps
    # per SM); D = 1 and 2 take 2.52 cycles per request, but there ncu shows no lg_throttle and 0.14
    # long_scoreboard per issue: the loop's address arithmetic bounds it, not L1TEX. Without it
    # (micro/l1_request_cost.json: LDG [R+imm], 64 warps) a one-line request costs 1.08 cycles whether
    # it reads 4 sectors or 1 (a broadcast), a 4-line one 4.04. Confirms l1_data_lines_per_cycle.
    l1_data_wavefronts_per_sm_cycle: float = 1.0  # [M] micro/lg_throughput.json
    # [M] micro/mio_queue_depth.json, lg_queue_depth.json: one warp issues an LDS / LDG once every 4
    # cycles (issue_cycles +4 per load, 1 or 4 warps), and queue_stalls_ncu.json counts the 3 cycles
    # between two loads of a warp as `wait` (wait/issue grows by ~3 per extra load), not as a throttle
    mem_issue_interval_cycles: int = 4      # [M] per warp, between two of its memory instructions
    # [M] micro/mio_queue_depth.json, lg_queue_depth.json: one warp alone drains 32-wavefront LDS and
    # 32-line LDG at 64 cycles each (drain_cycles_per_load_when_full 64.0 / 64.1; ncu's warp cycles per
    # instruction in queue_stalls_ncu.json agree), while 4 warps on 4 SMSPs (130.3 per load per warp)
    # and 32 warps (shared_pipe_rate.json) reach the SM's 1 wavefront/cycle. For the shared pipe the
    # limit is the warp's, not the SMSP's (micro/lds_bursts_order.json: conflict-free LDS.128 from 1 / 2
    # / 4 warps of one SMSP return 0.25 / 0.41 / 0.63 wavefronts per cycle, consumed bursts): a warp's
    # shared load returns at most one wavefront per 2 cycles, whatever its width
    # (micro/lds_wide_return.json, bursts timed to the branch on their last load: LDS.128 8.0 cycles
    # a load conflict-free, 16.0 with a 2-way conflict, 33.6 4-way; LDS.64 4 / 8.8 / 16.8). The L1TEX
    # data stage keeps the per-SMSP limit (one SMSP every other cycle).
    warp_shared_cycles_per_wavefront: int = 2   # [M] per warp
    # [M] micro/lds_bursts_order.json, 16 warps: a broadcast LDS.128 (1 wavefront, 4 registers per
    # lane) costs the SM 2.19 cycles, a conflict-free LDS.64 (2 wavefronts) 2.14, LDS.128 (4) 4.18: the
    # shared pipe writes back 2 registers (32 lanes each) per cycle besides its wavefront per cycle
    shared_writeback_regs_per_sm_cycle: int = 2  # [M] per SM
    smsp_l1_cycles_per_line: int = 2            # [M] per SMSP
    # [PG][M] ncu counts one L1TEX data pipe (l1tex__data_pipe_lsu_wavefronts = _mem_shared + _mem_lgds)
    # whose peak is one wavefront per cycle; traces/hw/h200/breakdown/: regblock at 2048 runs it at
    # 0.76 shared + 0.13 global wavefronts per cycle (89 % of peak): a global request's lines take cycles
    # of the pipe the shared loads and stores use (who goes first: the rows below)
    shared_and_global_share_data_pipe: bool = True
    # [M] micro/queue_warps_ncu.json: in the shared-load burst kernels each warp's two stamp STGs carry a
    # read barrier that the next burst's first instruction waits on (long_scoreboard). With one warp per
    # SMSP the H200's warps wait 0.5-1.6 per issue there, with 2-8 per SMSP 14-31: a global instruction
    # waits behind the older shared ones of its own SMSP (one LSU instruction queue per SMSP, as NVIDIA's
    # forum describes the Volta-Ampere MIO), not behind the other SMSPs'. The engine's MIO and LG queues of
    # an SMSP therefore leave in issue order, and the data pipe's two clients (shared wavefronts, global
    # hit / store lines) take turns when both want it rather than the older going first (that rule gave the
    # one-warp-per-SMSP STGs 13-15 per issue)
    lsu_queue_in_order: bool = True         # [M]
    data_pipe_clients_take_turns: bool = True   # [M]
    # [M] micro/lg_throughput.json: its loop's SASS (micro/lg_throughput.sass) overwrites nine of its
    # sixteen loads' address registers before the next loads, waiting on their read barriers; with the
    # registers read only when L1TEX takes a load the engine splits the wait long_scoreboard / lg_throttle
    # 1.18-1.29 where ncu has 0.66-0.81, reading an SMSP's 6 oldest untaken memory instructions gives
    # 0.67-0.75; micro/queue_warps_ncu.json's stamp stores behind 2-8 warps per SMSP of shared loads then
    # wait 0.85-1.09 times as long as on the H200 (1.3-1.6 read at the take): the LSU queue reads the
    # registers of its first 6 entries (the in-order queue above; 0: each when its pipe takes it).
    # Since the LG cap on untaken loads (lg_sm_untaken_depth) the lg_throughput split is 0.33-0.37 with 6
    # (0.55-0.61 with 0, where the stamp stores wait 1.27-1.63x): the read-ahead now rests on queue_warps
    lsu_queue_read_ahead: int = 6           # [M] instructions per SMSP
    # [M] micro/mio_queue_depth.json one warp: bursts of 32 / 40 / 48 / 64 LDS issue at 151 / 663 /
    # 1175 / 2199 cycles: the 32nd waits for the 2nd load's DATA (start 65 + 62 + 23 = 150), then one
    # issue per 64-cycle return: an MIO / LG entry counts against the depth until its data returns
    queue_entry_until_return: bool = True   # [M] (False: until the pipe takes it)
    pending_hit_entry_until_fill: bool = False  # [M] an L1 hit on a line still being filled: its LG entry counts until its own
    # return from L1TEX, not until the fill (micro/l1_pending.json, l1_shared_ncu.json: 130-204 such loads in
    # flight per SM with lg_throttle at most 1.25 per issue; True: the engine held 80 of them at 7.7)

    def describe(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


H200 = GPU(
    name="H200", sm_version=90,
    sm_count=132,                         # [M] cudaDeviceProp.multiProcessorCount
    smsp_per_sm=4,                        # [PG]
    warp_size_threads=32,
    max_warps_per_sm=64,                  # [CC][M]
    max_threads_per_sm=2048,              # [CC][M]
    max_blocks_per_sm=32,                 # [CC][M]
    max_threads_per_block=1024,           # [CC]
    regs_per_sm=65536,                    # [CC] 64K x 32-bit, 16K per SMSP
    max_regs_per_thread=255,              # [CC]
    reg_alloc_unit_per_warp=256,          # [OCC]
    shared_per_sm_bytes=233472,           # [CC][M] 228 KB
    shared_per_block_optin_bytes=232448,  # [CC][M] 227 KB
    shared_per_block_static_bytes=49152,  # [CC] 48 KB static
    shared_reserved_per_block_bytes=1024,  # [OCC]
    shared_alloc_unit_bytes=128,          # [OCC]
    shared_banks=32,                      # [PG]
    l1_shared_total_bytes=262144,         # [CC] 256 KB unified
    l2_bytes=62914560,                    # [M] 60 MB
    sm_clock_max_mhz=1980.0,              # [M]
    dram_bandwidth_gbps=4810.0,           # [M] 6016-bit x 3.201 GHz DDR
    fp32_lanes_per_smsp=32,               # [F-302018] FMA-heavy 16 + FMA-lite 16
    ffma_dependent_latency_cycles=4.07,   # [M] micro/latency_ffma.json
    lds_latency_cycles=23.0,              # [M] micro/latency_lds.json
    l1_hit_latency_cycles=32.07,          # [M] micro/latency_l1_hit.json
    l2_hit_latency_cycles=281.47,         # [M] micro/latency_l2_hit.json (8 MiB .cg chase)
    # [M] micro/l2_light_ncu.json: a DRAM-level load of one full line (read_bw_f32's stream over 2 GiB, 1-4
    # warps on 8-132 SMs, light load) takes 766-787 cycles from issue to retirement (ncu), median 784.5;
    # the idle dependent chase of single sectors (micro/latency_dram.json) 683.8
    dram_latency_ns=396.2,
    issue_per_smsp_per_cycle=1.0,         # [M] smsp__issue_active peak 1
    fma_pipe_warp_inst_per_smsp_cycle=1.0,  # [M] heavy 0.5 + lite 0.5
    shared_wavefronts_per_sm_cycle=1.0,   # [M] ncu peak
    l1_requests_per_sm_cycle=1.0,         # [M] L1 tag stage
    l1_sectors_per_sm_cycle=16.0,         # [M] L1 tag stage
    sector_bytes=32,                      # [PG]
    line_bytes=128,                       # [PG]
)

RTX_A6000 = GPU(
    name="RTX A6000", sm_version=86,
    sm_count=84,                          # [DS]
    smsp_per_sm=4,
    warp_size_threads=32,
    max_warps_per_sm=48,                  # [CC]
    max_threads_per_sm=1536,              # [CC]
    max_blocks_per_sm=16,                 # [CC]
    max_threads_per_block=1024,
    regs_per_sm=65536,
    max_regs_per_thread=255,
    reg_alloc_unit_per_warp=256,
    shared_per_sm_bytes=102400,           # [CC] 100 KB
    shared_per_block_optin_bytes=101376,  # [CC] 99 KB
    shared_per_block_static_bytes=49152,
    shared_reserved_per_block_bytes=1024,
    shared_alloc_unit_bytes=128,
    shared_banks=32,
    l1_shared_total_bytes=131072,         # [CC]
    l2_bytes=6291456,                     # [DS] 6 MB
    l2_stream_resident_bytes=4194304,     # (unverified) two thirds of the L2, as the H200's 40 of 60 MB
    sm_clock_max_mhz=1800.0,              # [DS] boost
    dram_bandwidth_gbps=768.0,            # [DS] GDDR6
    fp32_lanes_per_smsp=32,
    ffma_dependent_latency_cycles=4.0,    # A100 stand-in, HARDWARE.md s.2
    lds_latency_cycles=23.0,              # A100 stand-in (23-29)
    l1_hit_latency_cycles=33.0,           # A100 stand-in (33-38)
    l2_hit_latency_cycles=200.0,          # A100 stand-in (~200-357) (unverified)
    dram_latency_ns=350.0,                # (unverified)
    issue_per_smsp_per_cycle=1.0,
    fma_pipe_warp_inst_per_smsp_cycle=1.0,
    shared_wavefronts_per_sm_cycle=1.0,
    l1_requests_per_sm_cycle=1.0,
    l1_sectors_per_sm_cycle=16.0,         # (unverified)
    sector_bytes=32,
    line_bytes=128,
    l2_bandwidth_gbps=2 * 768.0,          # (unverified) guess: twice DRAM
    dram_achieved_bandwidth_gbps=768.0,   # (unverified) datasheet peak
    dram_copy_bandwidth_gbps=768.0,       # (unverified) reads and writes at the same rate
    l2_write_gsectors_per_s=0.0,          # (not measured: stores cost the L2 nothing)
    l2_partial_sector_write_gsectors_per_s=0.0,
    l2_partial_line_write_gsectors_per_s=0.0,
    l2_filled_line_write_gsectors_per_s=0.0,
)

RTX_5080 = GPU(
    name="RTX 5080", sm_version=120,
    sm_count=84,                          # [DS]
    smsp_per_sm=4,                        # (unverified)
    warp_size_threads=32,
    max_warps_per_sm=48,                  # [CC]
    max_threads_per_sm=1536,              # [CC]
    max_blocks_per_sm=24,                 # [CC] (BwTG says 32)
    max_threads_per_block=1024,
    regs_per_sm=65536,
    max_regs_per_thread=255,
    reg_alloc_unit_per_warp=256,
    shared_per_sm_bytes=102400,           # [CC] 100 KB (BwTG says 128)
    shared_per_block_optin_bytes=101376,  # [CC] 99 KB
    shared_per_block_static_bytes=49152,
    shared_reserved_per_block_bytes=1024,
    shared_alloc_unit_bytes=128,
    shared_banks=32,
    l1_shared_total_bytes=131072,
    l2_bytes=67108864,                    # [DS] 64 MB
    l2_stream_resident_bytes=44739242,    # (unverified) two thirds of the L2, as the H200's 40 of 60 MB
    sm_clock_max_mhz=2620.0,              # [DS] boost
    dram_bandwidth_gbps=960.0,            # [DS] GDDR7; seed 003's memory floor uses 960 GB/s
    fp32_lanes_per_smsp=32,               # 128 / SM (unverified detail)
    ffma_dependent_latency_cycles=4.0,    # (unverified)
    lds_latency_cycles=33.0,              # seed 004: "roughly 33 cycles" on GB203
    l1_hit_latency_cycles=44.0,           # RTX 5090 stand-in, HARDWARE.md s.2
    l2_hit_latency_cycles=358.0,          # seed 004: 358 cycles for an L2 hit
    dram_latency_ns=357.0,                # RTX 5090 stand-in: 936 cycles at 2.62 GHz
    issue_per_smsp_per_cycle=1.0,         # (unverified)
    fma_pipe_warp_inst_per_smsp_cycle=1.0,  # (unverified)
    shared_wavefronts_per_sm_cycle=1.0,   # seed 004: 32 banks x 4 B = 128 B / cycle / SM
    l1_requests_per_sm_cycle=1.0,         # (unverified)
    l1_sectors_per_sm_cycle=16.0,         # (unverified)
    sector_bytes=32,
    line_bytes=128,
    l2_bandwidth_gbps=2 * 960.0,          # (unverified) guess: twice DRAM
    dram_achieved_bandwidth_gbps=960.0,   # (unverified) datasheet peak
    dram_copy_bandwidth_gbps=960.0,       # (unverified) reads and writes at the same rate
    l2_write_gsectors_per_s=0.0,          # (not measured: stores cost the L2 nothing)
    l2_partial_sector_write_gsectors_per_s=0.0,
    l2_partial_line_write_gsectors_per_s=0.0,
    l2_filled_line_write_gsectors_per_s=0.0,
)

PRESETS: dict[str, GPU] = {"h200": H200, "a6000": RTX_A6000, "rtx5080": RTX_5080}


def get_arch(name: str | GPU) -> GPU:
    if isinstance(name, GPU):
        return name
    if not isinstance(name, str):
        raise GpusimError(f"unknown arch {name!r}: a preset's name ({', '.join(PRESETS)}) or a GPU")
    key = name.lower().replace(" ", "").replace("-", "").replace("_", "")
    aliases = {"rtxa6000": "a6000", "ga102": "a6000", "gb203": "rtx5080", "5080": "rtx5080"}
    key = aliases.get(key, key)
    if key not in PRESETS:
        raise GpusimError(f"unknown arch {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[key]


# fields where 0 is a setting ("no such cap", "off", "none", per their comments in GPU); every other number is
# a count, size, clock, bandwidth, latency or rate, and must be positive
ZERO_ALLOWED = frozenset({"lg_sm_untaken_depth", "shfl_shared_pipe_cycles", "lg_sm_miss_depth", "lg_sm_miss_sectors",
                          "lsu_queue_read_ahead", "register_read_lead_cycles", "l2_write_buffer_sectors", "launch_overhead_us",
                          "cta_dispatch_ns", "cta_slot_gap_ns", "cta_first_round_ns", "launch_end_ns", "sm_l2_latency_spread", "atomic_same_address_ns",
                          "l2_write_gsectors_per_s", "l2_partial_sector_write_gsectors_per_s",
                          "l2_partial_line_write_gsectors_per_s", "l2_filled_line_write_gsectors_per_s",
                          "dram_write_latency_cycles_per_tbps", "dram_mix_latency_cycles_per_tbps2"})


def _field_type(f) -> str:
    return f.type if isinstance(f.type, str) else f.type.__name__     # (annotations are strings here)


def _field_value(gpu: GPU, name: str, kind: str, raw):
    """`raw` (a number, or the text of --set) as field `name` of type `kind` takes it, or a one-line refusal."""
    old = getattr(gpu, name)
    said = f"--set {name}={raw}"
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise GpusimError(f"{said}: {name} is a switch, true or false ({gpu.name}: {str(old).lower()})")
    if kind not in ("int", "float"):
        raise GpusimError(f"{said}: {name} is a {kind} field; --set changes numeric and true/false fields only")
    try:
        if isinstance(raw, bool):
            raise ValueError
        if kind == "int":
            if isinstance(raw, float):
                raise ValueError
            value = int(raw.strip()) if isinstance(raw, str) else int(raw)
        else:
            value = float(raw.strip()) if isinstance(raw, str) else float(raw)
            if not math.isfinite(value):
                raise ValueError
    except (TypeError, ValueError):
        want = "an integer" if kind == "int" else "a number"
        raise GpusimError(f"{said}: {name} takes {want} ({gpu.name}: {old})") from None
    if value < 0 or (value == 0 and name not in ZERO_ALLOWED):
        floor = "0 or more" if name in ZERO_ALLOWED else "positive"
        raise GpusimError(f"{said}: {name} must be {floor} ({gpu.name}: {old})")
    return value


def override(arch: str | GPU, sets=None) -> GPU:
    """The GPU `arch` (a preset's name or a GPU) with the fields of `sets` ({field: value}, values as
    numbers or as the text `--set FIELD=VALUE` gives) replaced: each name checked against GPU's fields
    (an unknown one refused with the closest names), each value against its field's type; counts,
    sizes, clocks, bandwidths and latencies must be positive. The GPU keeps its name: `arch_overrides`
    tells what differs from the preset."""
    gpu = get_arch(arch)
    kinds = {f.name: _field_type(f) for f in fields(GPU)}
    changes = {}
    for name, raw in (sets or {}).items():
        if name not in kinds:
            close = difflib.get_close_matches(name, list(kinds), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else " (gpusim.arch.GPU lists the fields)"
            raise GpusimError(f"--set {name}: the GPU preset has no field {name!r}{hint}")
        if name == "name":      # the preset's identity: what arch_overrides compares against
            raise GpusimError("--set name: the preset's name cannot be changed (pick another with --arch)")
        changes[name] = _field_value(gpu, name, kinds[name], raw)
    return replace(gpu, **changes) if changes else gpu


def arch_overrides(gpu: GPU) -> dict:
    """{field: {"old": the preset's value, "new": this GPU's}} for each field `gpu` changes from the
    preset of its name ({} for a preset itself, or a GPU that is no preset's)."""
    base = next((p for p in PRESETS.values() if p.name == gpu.name), None)
    if base is None or base == gpu:
        return {}
    return {f.name: {"old": getattr(base, f.name), "new": getattr(gpu, f.name)}
            for f in fields(GPU) if getattr(base, f.name) != getattr(gpu, f.name)}
