"""Provenance of a hardware run: device, driver, CUDA versions and clocks.

Reads only (nvidia-smi queries and NVML getters); never changes a setting of
the card. NVML (the nvidia-ml-py package) is imported lazily; without it the
clock sampler falls back to one nvidia-smi reading.
"""
from __future__ import annotations

import datetime as _dt
import shutil
import statistics
import subprocess
import threading

SMI_FIELDS = ["name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm",
              "clocks.max.mem", "clocks.applications.graphics", "power.draw", "power.limit",
              "temperature.gpu", "pstate", "persistence_mode", "compute_mode",
              "clocks_event_reasons.active", "memory.total", "ecc.mode.current", "mig.mode.current"]


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _num(s: str):
    s = s.strip()
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def smi_query(fields=None) -> dict:
    """One nvidia-smi --query-gpu reading of the first GPU (fields it refuses are left out)."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return {}
    out = {}
    for f in (fields or SMI_FIELDS):
        r = subprocess.run([exe, "--id=0", f"--query-gpu={f}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() and "Field" not in r.stdout:
            out[f] = _num(r.stdout.strip().splitlines()[0])
    return out


def smi_summary() -> str:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return ""
    r = subprocess.run([exe], capture_output=True, text=True)
    q = subprocess.run([exe, "-q", "-d", "CLOCK,PERFORMANCE,POWER"], capture_output=True, text=True)
    return r.stdout + "\n" + q.stdout


def cuda_versions(cp=None) -> dict:
    out = {}
    if cp is not None:
        rt = cp.cuda.runtime
        v = rt.runtimeGetVersion()
        out["runtime"] = f"{v // 1000}.{v % 1000 // 10}"
        v = rt.driverGetVersion()
        out["driver_api"] = f"{v // 1000}.{v % 1000 // 10}"
        out["cupy"] = getattr(cp, "__version__", "?")
        try:
            out["cublas"] = str(cp.cuda.cublas.getVersion(cp.cuda.device.get_cublas_handle()))
        except Exception:      # noqa: BLE001 - the version is a nicety
            pass
    nvcc = shutil.which("nvcc")
    if nvcc:
        r = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
        for ln in r.stdout.splitlines():
            if "release" in ln:
                out["nvcc"] = ln.split("release", 1)[1].strip()
    return out


class ClockSampler:
    """Samples SM and memory clocks, power and temperature every `period_s` in a thread.

    Use as a context manager around the timed launches; `summary()` gives
    min / median / max of each series.
    """

    def __init__(self, period_s: float = 0.01):
        self.period_s = period_s
        self.samples = {"sm_mhz": [], "mem_mhz": [], "power_w": [], "temp_c": []}
        self.source = None
        self._stop = threading.Event()
        self._thread = None
        self._nvml = None
        self._handle = None

    def _open(self):
        try:
            import pynvml
            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.source = f"NVML, every {self.period_s * 1000:.0f} ms during the timed launches"
        except Exception:      # noqa: BLE001 - no NVML: nvidia-smi once afterwards
            self._nvml = None

    def _read(self):
        n, h = self._nvml, self._handle
        s = self.samples
        s["sm_mhz"].append(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM))
        s["mem_mhz"].append(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM))
        try:
            s["power_w"].append(n.nvmlDeviceGetPowerUsage(h) / 1000.0)
            s["temp_c"].append(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU))
        except Exception:      # noqa: BLE001
            pass

    def _loop(self):
        while not self._stop.is_set():
            try:
                self._read()
            except Exception:      # noqa: BLE001
                return
            self._stop.wait(self.period_s)

    def __enter__(self):
        self._open()
        if self._nvml is not None:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self._nvml is None:
            q = smi_query(["clocks.sm", "clocks.mem", "power.draw", "temperature.gpu"])
            for key, f in (("sm_mhz", "clocks.sm"), ("mem_mhz", "clocks.mem"),
                           ("power_w", "power.draw"), ("temp_c", "temperature.gpu")):
                if isinstance(q.get(f), (int, float)):
                    self.samples[key].append(q[f])
            self.source = "nvidia-smi, once right after the timed launches"
        return False

    def summary(self) -> dict:
        out = {"source": self.source or "none"}
        for k, v in self.samples.items():
            if v:
                out[k] = {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}
        return out
