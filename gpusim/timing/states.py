"""Warp states, named and defined as Nsight Compute names them (HARDWARE.md s.4, [PG] s.2.4.7).

Every resident warp is, in every cycle, in exactly one of these states; the
engine counts cycles per warp and state. `STATES[i]` is the ncu name of state
i; the kernel-level ratio is smsp__average_warps_issue_stalled_<name>_per_issue_active.ratio.
"""

STATES = (
    "selected",            # issued this cycle
    "not_selected",        # eligible, but the scheduler picked another warp
    "wait",                # waiting on a fixed-latency result (FFMA -> FFMA, IMAD, ALU ...)
    "short_scoreboard",    # waiting on an MIO result (shared load, shuffle, S2R) or an XU / LDC one
    "long_scoreboard",     # waiting on an L1TEX result (global load)
    "mio_throttle",        # next instruction is shared memory, a shuffle or an S2R and the SMSP's MIO queue is full
    "lg_throttle",         # next instruction is global memory and the SMSP's LG queue is full
    "math_pipe_throttle",  # next instruction's math pipe is busy
    "barrier",             # waiting at BAR.SYNC for the other warps of its CTA
    "drain",               # all instructions issued; its memory instructions still in flight
    "dispatch_stall",      # eligible, but held at dispatch (the FP32 switch bubble, the register banks' reads)
    "no_instruction",      # not modelled (always 0)
)
S_SELECTED, S_NOT_SELECTED, S_WAIT, S_SHORT_SB, S_LONG_SB, S_MIO_THROTTLE, S_LG_THROTTLE, \
    S_MATH_THROTTLE, S_BARRIER, S_DRAIN, S_DISPATCH, S_NO_INST = range(len(STATES))
N_STATES = len(STATES)


def stall_metric(name: str) -> str:
    """The ncu metric for the cycles warps spent in state `name`, per issued instruction."""
    return f"smsp__average_warps_issue_stalled_{name}_per_issue_active.ratio"


def top_stall(values: dict) -> str | None:
    """The largest stall reason other than selected (the warp issuing), from {reason: ratio}."""
    cand = {k: v for k, v in values.items() if k != "selected"}
    return max(cand, key=cand.get) if cand else None


def warp_ratios(active_cycles, issued, state_cycles) -> dict:
    """One warp's ncu ratios: its cycles in total and in each state (state_cycles[k] for STATES[k]) per
    instruction it issued."""
    n = max(int(issued), 1)
    out = {"smsp__average_warp_latency_per_inst_issued.ratio": float(active_cycles) / n}
    for k, name in enumerate(STATES):
        out[stall_metric(name)] = float(state_cycles[k]) / n
    return out
