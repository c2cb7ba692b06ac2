"""Build hook: a wheel carries the data a prediction reads (traces/static, traces/hw and the CUDA
twins' sources) under gpusim/data/, where gpusim.paths finds them outside a checkout."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithData(build_py):
    def run(self):
        super().run()
        dest = Path(self.build_lib) / "gpusim" / "data"
        for sub in ("traces/static", "traces/hw"):
            if (ROOT / sub).is_dir():
                shutil.copytree(ROOT / sub, dest / sub, dirs_exist_ok=True)
        (dest / "kernels_cuda").mkdir(parents=True, exist_ok=True)
        for f in sorted((ROOT / "kernels_cuda").glob("*.cu")):
            shutil.copy2(f, dest / "kernels_cuda" / f.name)


setup(cmdclass={"build_py": BuildWithData})
