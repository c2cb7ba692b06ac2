"""The SM's path to the L2 and DRAM: bandwidth servers and the fills in flight per 128-B line.

An L1 miss takes its bytes through the SM's share of the chip's L2 bandwidth (no more than the L2->L1
port, fill_bytes a cycle) and a DRAM miss also through its share of the DRAM bandwidth: in-order servers in
1/FP-cycle units; the data is ready at the later of its level's latency and the servers' completion. The
DRAM server sits on the request's way, not beside it: it keeps its times as the data's arrivals, so a
request finds it no sooner than its own latency less its bytes' time (a lone request takes the latency,
which holds its own bytes' time; a run of them the latency and then the bytes' time each). A launch that
streams from DRAM from its first request pays the latency once before the bytes flow
(micro/bandwidth_rows.json: a one-round 64 MB read takes 1.3-2 us more than the bandwidth alone). The
engine keeps, per line, when its last fill from L2/DRAM lands: an L1 hit on a line still on its way gets its
data then (the cache model decides hit or miss in program order). A global store's sectors go to the L2 at
the SM's share of its write rate (by how they fill their sectors: whole, part of several of a line, one per
line); its LG entry holds until the L2 takes them, or, with the SM's requests in order (l2_in_order), until
the SM's path to the L2 has room for them (write_buf sectors not yet taken; L1TEX holds it till then), and
an L1 miss sent after it reaches the L2 behind it (request_at). A store the L2 will write back to DRAM does
not wait for it, but its bytes take the SM's share of the DRAM bandwidth from the loads behind it; the CTAs
that follow on the SM (the next round) find DRAM so, and a round ends when both servers are done
(drain_cycles)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import F_WRITEBACK, FP, K_FILL_BUSY, R_FLAGS, R_LINE_HI, R_LINE_LO, WRITE_SHIFT

M_FILL, M_DRAM, M_WRITE, N_M_REG = range(4)    # MemPath.reg: each server's next free time, FP units

# line_ready: per line, when its last fill from L2/DRAM lands; reg: the L2 fill, DRAM and L2 write servers
MemPath = namedtuple("MemPath", ["line_ready", "reg"])


@njit(cache=True, inline="always", error_model="numpy")
def new_memory_path(n_lines):
    return MemPath(line_ready=np.zeros(max(n_lines, 1), np.int64), reg=np.zeros(N_M_REG, np.int64))


@njit(cache=True, inline="always", error_model="numpy")
def fetch(mp, r, t, lv, sec, done, rows, line_id, counters, sector_bytes, fill_bytes, l2_share, dram_share):
    """An L1 miss r (level lv: 1 L2, 2 DRAM, 3 L2 pending) of sec sectors sent at t, its data back at done
    by latency alone: when it is back through the servers; its lines' fills land then."""
    nbytes = sec * sector_bytes
    fill = max(nbytes * FP * FP // l2_share, (nbytes * FP + fill_bytes - 1) // fill_bytes)
    mp.reg[M_FILL] = max(mp.reg[M_FILL], t * FP) + fill
    done_fp = max(done * FP, mp.reg[M_FILL])
    if lv == 2:
        serve = nbytes * FP * FP // dram_share
        mp.reg[M_DRAM] = max(mp.reg[M_DRAM], done * FP - serve) + serve
        done_fp = max(done_fp, mp.reg[M_DRAM])
    done = (done_fp + FP - 1) // FP
    counters[K_FILL_BUSY] += fill // FP
    for j in range(rows[r, R_LINE_LO], rows[r, R_LINE_HI]):
        mp.line_ready[line_id[j]] = max(mp.line_ready[line_id[j]], done)
    return done


@njit(cache=True, inline="always", error_model="numpy")
def request_at(mp, t):
    """When an L1 miss L1TEX sends at t reaches the L2, the SM's requests in order: behind the stores
    it sent before (the write server's backlog)."""
    return max(t, (mp.reg[M_WRITE] + FP - 1) // FP)


@njit(cache=True, inline="always", error_model="numpy")
def fill_landing(mp, r, rows, line_id):
    """An L1 hit r: when the last fill of its lines lands (0 when none is on its way)."""
    fill_at = np.int64(0)
    for j in range(rows[r, R_LINE_LO], rows[r, R_LINE_HI]):
        fill_at = max(fill_at, mp.line_ready[line_id[j]])
    return fill_at


@njit(cache=True, inline="always", error_model="numpy")
def store(mp, r, t, sec, done, rows, write_fp, sector_bytes, dram_write_share, l2_share, dram_lat):
    """A global store r of sec sectors taken at t, done at L1TEX by done: when the L2 has taken its sectors;
    l2_share > 0: its bytes also take the L2 server the reads' fills go through (the loads behind them
    wait); a write-back's bytes go on the DRAM server, a DRAM latency (dram_lat) on, as the reads' do."""
    if l2_share > 0:
        mp.reg[M_FILL] = max(mp.reg[M_FILL], t * FP) + sec * sector_bytes * FP * FP // l2_share
    if write_fp[0] > 0:
        kind = (rows[r, R_FLAGS] >> WRITE_SHIFT) & 3
        mp.reg[M_WRITE] = max(mp.reg[M_WRITE], t * FP) + sec * write_fp[kind]
        done = max(done, (mp.reg[M_WRITE] + FP - 1) // FP)
    if (rows[r, R_FLAGS] & F_WRITEBACK) != 0 and dram_write_share > 0:
        mp.reg[M_DRAM] = max(mp.reg[M_DRAM], (t + dram_lat) * FP) + sec * sector_bytes * FP * FP // dram_write_share
    return done


@njit(cache=True, inline="always", error_model="numpy")
def drain_cycles(mp, dram_lat):
    """The cycle the SM's share of DRAM and of the L2's write rate is done with what it was given (the DRAM
    server's times are its data's arrivals, a latency after the requests: a read sent a DRAM latency
    before it frees waits for nothing)."""
    return (max(mp.reg[M_DRAM] - dram_lat * FP, mp.reg[M_WRITE]) + FP - 1) // FP


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
