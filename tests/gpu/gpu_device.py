"""Whether a CUDA device can be used here, asked of the driver directly (libcuda.so.1), as the GPU
checkers and the GPU kit need to know before running anything: the CUDA programs link libcuda and
would not even load without it."""
import ctypes

SKIP_EXIT_CODE = 77  # CTest's skip, and the GPU kit's "no GPU here"


def no_device_reason():
    """Why no CUDA device can be used here, or None when one can."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        return f"no CUDA driver ({error})"
    status = cuda.cuInit(0)
    if status != 0:
        text = ctypes.c_char_p()
        cuda.cuGetErrorString(status, ctypes.byref(text))
        return f"cuInit failed: {(text.value or b'error %d' % status).decode()}"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "the CUDA driver reports no device"
    return None
