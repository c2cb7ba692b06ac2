import pytest


def pytest_collection_modifyitems(config, items):
    try:
        import cupy  # noqa: F401
        has_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:   # noqa: BLE001 - no cupy or no device: skip GPU tests
        has_gpu = False
    if not has_gpu:
        skip = pytest.mark.skip(reason="needs a CUDA GPU with cupy")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
