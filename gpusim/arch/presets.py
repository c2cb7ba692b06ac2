"""GPU presets.

Every field carries its unit in its name and a source in the comment beside it.
Source tags are those of shared/HARDWARE.md: [M] measured on the project's H200
(re-measured records live under traces/hw/h200/micro/), [PG] Nsight Compute
Profiling Guide, [CC] CUDA Programming Guide compute-capability tables,
[OCC] cuda_occupancy.h, [F-n] NVIDIA developer forum thread n, [DS] vendor
datasheet. "(unverified)" marks a figure from a single secondary source.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

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
    alu_issue_interval_cycles: int = 2      # (unverified) 16 INT32 lanes/SMSP -> 0.5 warp-inst/cycle
    xu_issue_interval_cycles: int = 8       # (unverified) 16 SFU lanes/SM -> 0.125 warp-inst/cycle/SMSP
    imad_latency_cycles: int = 4            # (unverified) taken equal to FFMA's
    alu_latency_cycles: int = 4             # (unverified) IADD3/LOP3/ISETP ... dependent latency
    xu_latency_cycles: int = 18             # (unverified) MUFU/conversions, treated as fixed latency
    other_latency_cycles: int = 4           # (unverified) uniform, ADU (S2R, LDC) and CBU results
    mio_queue_depth: int = 8                # (unverified) instructions per SMSP; measure with LDS bursts
    lg_queue_depth: int = 8                 # (unverified) instructions per SMSP
    l2_to_l1_bytes_per_sm_cycle: int = 128  # [M] ncu peak, HARDWARE.md s.2
    bar_sync_release_cycles: int = 1        # (unverified) last arrival -> first issue after BAR.SYNC

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
    ffma_dependent_latency_cycles=4.06,   # [M] HARDWARE.md s.2
    lds_latency_cycles=23.0,              # [M] HARDWARE.md s.2
    l1_hit_latency_cycles=35.0,           # [M] HARDWARE.md s.2
    l2_hit_latency_cycles=282.0,          # [M] HARDWARE.md s.2 (281-284)
    dram_latency_ns=335.0,                # [M] HARDWARE.md s.2 (654-681 cycles at 1.98 GHz)
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
)

PRESETS: dict[str, GPU] = {"h200": H200, "a6000": RTX_A6000, "rtx5080": RTX_5080}


def get_arch(name: str | GPU) -> GPU:
    if isinstance(name, GPU):
        return name
    key = name.lower().replace(" ", "").replace("-", "").replace("_", "")
    aliases = {"rtxa6000": "a6000", "ga102": "a6000", "gb203": "rtx5080", "5080": "rtx5080"}
    key = aliases.get(key, key)
    if key not in PRESETS:
        raise GpusimError(f"unknown arch {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[key]
