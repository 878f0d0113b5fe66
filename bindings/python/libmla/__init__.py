"""libmla: Python bindings of the libmla C ABI (ctypes; include/mla_c_api.h).

Importing finds and loads libmla.so (LIBMLA_PATH, next to the package, the build tree, then an
installed libmla; ImportError lists every path tried) and never needs a GPU driver. Device-free
functions (queries, planner, CPU reference) take explicit archs and NumPy arrays; decode() and the
other GPU functions take torch CUDA tensors, __cuda_array_interface__ objects or raw pointers.
Failing C calls raise an MlaError subclass (libmla.errors) with mla_last_error()'s message.
See docs/python.md.
"""
from . import _lib
from ._lib import load, status_string, last_error, __version__, PROTOTYPES
from .errors import (MlaError, MlaInvalidArgument, MlaUnsupported, MlaNoKernel, MlaArchNotBuilt,
                     MlaRuntimeUnavailable, MlaNoDevice, MlaCodeObjectError, MlaLaunchError,
                     MlaBufferTooSmall, MlaInternalError, MlaTableError, error_class)
from ._types import MlaBackend, MlaAsmStatus, Status, DType
from ._convert import numpy_dtype
from .routing import (version, version_string, decode_asm_query, ps1_fp8_asm_query,
                      reduce_supports, decode_occupancy, head_plan, shape_support, HeadPlan,
                      ShapeSupport, AsmQuery, arch_names, arch_info, arch_check, ArchInfo,
                      codeobject_root, set_codeobject_root)
from .planner import (metadata_info, plan_metadata, update_metadata, Plan, MetadataInfo,
                      PlanSummary)
from .reference import decode_reference, execute_plan_reference, DEFAULT_SM_SCALE
from .merge import merge_attn_states, merge_attn_states_host
from .device import context, Context, DeviceBuffer, device_copy, smoke_launch
from .decode import decode, plan_metadata_device, upload_plan, DevicePlan, check_cp_shard

lib = _lib.load()  # ImportError (listing the paths tried) when no libmla.so is found

__all__ = [
    "lib", "load", "status_string", "last_error", "__version__", "PROTOTYPES",
    "MlaError", "MlaInvalidArgument", "MlaUnsupported", "MlaNoKernel", "MlaArchNotBuilt",
    "MlaRuntimeUnavailable", "MlaNoDevice", "MlaCodeObjectError", "MlaLaunchError",
    "MlaBufferTooSmall", "MlaInternalError", "MlaTableError", "error_class",
    "MlaBackend", "MlaAsmStatus", "Status", "DType", "numpy_dtype",
    "version", "version_string", "decode_asm_query", "ps1_fp8_asm_query", "reduce_supports",
    "decode_occupancy", "head_plan", "shape_support", "HeadPlan", "ShapeSupport", "AsmQuery",
    "arch_names", "arch_info", "arch_check", "ArchInfo", "codeobject_root",
    "set_codeobject_root",
    "metadata_info", "plan_metadata", "update_metadata", "Plan", "MetadataInfo", "PlanSummary",
    "decode_reference", "execute_plan_reference", "DEFAULT_SM_SCALE", "merge_attn_states", "merge_attn_states_host",
    "decode", "plan_metadata_device", "upload_plan", "context", "Context", "DevicePlan",
    "check_cp_shard",
    "DeviceBuffer", "device_copy", "smoke_launch",
]
