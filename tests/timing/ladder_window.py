"""A ladder kernel's first round over a few loop trips, lowered as predict() gives it to the engine (the
cache model's levels, ptxas's stall counts, dependency and read barriers): the input of the engine tests
that run real kernels rather than hand-built traces."""
import gpusim
from gpusim.estimate import kernel_time as KT
from gpusim.timing import lower


def first_round_window(kernel: str, size: int, trips: int):
    """(trace window, lowered rows, GPU preset) of `kernel` at size^3: the CTAs resident on one SM."""
    res = gpusim.simulate(kernel, size)
    gpu = gpusim.get_arch("h200")
    tr, _ = KT.build_window(res, KT._resident(res, gpu, res.occupancy.blocks_per_sm), trips)
    counts, boards, reads, banks = ptx = KT.ptxas_facts(res)
    lw = lower(tr, gpu, global_level=KT.prediction_levels(res, gpu, ptx)[0](tr, gpu),
               stall_counts=counts, scoreboards=boards, read_barriers=reads, register_banks=banks)
    return tr, lw, gpu
