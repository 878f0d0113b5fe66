"""ctypes mirrors of the enums and structs of include/mla_c_api.h (names unchanged).

Every Structure lists the C fields in header order; `_defaults_` holds the values of the header's
*_INIT macro (tests/python/test_abi.py compiles a C program that checks sizeof, every field's
offset and every default against the header, so the binding cannot drift). Creating a Structure
sets struct_size and the defaults; keyword arguments override them.
"""
import ctypes
import enum

c_status = ctypes.c_int   # mla_status
c_enum = ctypes.c_int     # every C enum of the header (4-byte int on the supported ABIs)
c_ptr = ctypes.c_void_p   # data pointers (host or device addresses as Python ints)


class Status(enum.IntEnum):
    """mla_status."""
    SUCCESS = 0
    ERROR_INVALID_ARGUMENT = 1
    ERROR_UNSUPPORTED_SHAPE = 2
    ERROR_NO_KERNEL = 3
    ERROR_ARCH_NOT_BUILT = 4
    ERROR_RUNTIME_UNAVAILABLE = 5
    ERROR_NO_DEVICE = 6
    ERROR_CODE_OBJECT = 7
    ERROR_LAUNCH = 8
    ERROR_BUFFER_TOO_SMALL = 9
    ERROR_INTERNAL = 10
    ERROR_TABLE = 11


class DType(enum.IntEnum):
    """mla_dtype."""
    BF16 = 0
    FP16 = 1
    FP8_E4M3FN = 2
    FP8_E4M3FNUZ = 3
    BYTE = 4
    FP32 = 5


# dtype strings of the header's conventions -> mla_dtype.
DTYPE_NAMES = {"bf16": DType.BF16, "fp16": DType.FP16, "fp8": DType.FP8_E4M3FN,
               "fp8_fnuz": DType.FP8_E4M3FNUZ, "byte": DType.BYTE, "fp32": DType.FP32}
DTYPE_STRINGS = {v: k for k, v in DTYPE_NAMES.items()}


class Planner(enum.IntEnum):
    V1_0 = 0
    V1_1 = 1
    V1_2 = 2


class HeadPlanKind(enum.IntEnum):
    NATIVE = 0
    FOLDED = 1
    ACCEPTED_NON_NATIVE = 2
    UNSUPPORTED = 3


class MlaBackend(str, enum.Enum):
    """mla_backend as aiter's str-valued enum (plus libmla's "sm90")."""
    ASM = "asm"
    FLYDSL_PS1 = "flydsl_ps1"
    OPUS = "opus"
    HK = "hk"
    PS1_FP8_ASM = "ps1_fp8_asm"
    SM90 = "sm90"


class MlaAsmStatus(str, enum.Enum):
    """mla_asm_status as aiter's str-valued enum."""
    OK = "OK"
    REMAP_REJECT = "REMAP_REJECT"
    NO_KERNEL = "NO_KERNEL"
    ARCH_NOT_BUILT = "ARCH_NOT_BUILT"
    NOT_ASM = "NOT_ASM"
    UNKNOWN = "UNKNOWN"


BACKENDS = list(MlaBackend)          # index = C value
ASM_STATUSES = list(MlaAsmStatus)    # index = C value
PLANNERS = ["v1_0", "v1_1", "v1_2"]
HEAD_PLAN_KINDS = ["Native", "Folded", "AcceptedNonNative", "Unsupported"]


class _Versioned(ctypes.Structure):
    """Base of the header's structs: struct_size = sizeof, defaults from the INIT macro."""
    _defaults_ = {}

    def __init__(self, **kw):
        values = dict(self._defaults_)
        values.update(kw)
        super().__init__(struct_size=ctypes.sizeof(self), **values)

    def to_dict(self):
        out = {}
        for name, ctype in self._fields_:
            v = getattr(self, name)
            if isinstance(v, bytes):
                v = v.decode()
            out[name] = v
        return out


class mla_arch_info(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("arch", ctypes.c_char * 32),
                ("known", ctypes.c_int32), ("vendor", ctypes.c_int32),
                ("num_tables", ctypes.c_int32), ("num_rows", ctypes.c_int32),
                ("missing_files", ctypes.c_int32), ("default_num_cus", ctypes.c_int32)]


class mla_context_options(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("device", ctypes.c_int32),
                ("arch", ctypes.c_char_p), ("codeobject_root", ctypes.c_char_p)]


class mla_amd_stage1_args(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("q_dtype", c_enum), ("kv_dtype", c_enum),
                ("batch_size", ctypes.c_int32), ("num_heads", ctypes.c_int32),
                ("nhead_kv", ctypes.c_int32), ("max_seqlen_q", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("causal", ctypes.c_int32),
                ("persistent", ctypes.c_int32), ("softmax_scale", ctypes.c_float),
                ("q", c_ptr), ("q_stride_token", ctypes.c_int64), ("q_stride_head", ctypes.c_int64),
                ("kv_cache", c_ptr), ("kv_stride_page", ctypes.c_int64),
                ("num_pages", ctypes.c_int64), ("qo_indptr", c_ptr), ("kv_indptr", c_ptr),
                ("kv_page_indices", c_ptr), ("num_page_indices", ctypes.c_int64),
                ("kv_last_page_lens", c_ptr), ("num_kv_splits_indptr", c_ptr),
                ("work_meta_data", c_ptr), ("work_indptr", c_ptr),
                ("work_indptr_len", ctypes.c_int64), ("work_info_set", c_ptr),
                ("split_data", c_ptr), ("num_splits", ctypes.c_int32), ("split_dtype", c_enum),
                ("split_lse", c_ptr), ("output", c_ptr), ("lse", c_ptr), ("q_scale", c_ptr),
                ("kv_scale", c_ptr), ("g_kv_indptr", c_ptr), ("cp_world_size", ctypes.c_int32),
                ("cp_rank", ctypes.c_int32), ("valid_split_count", c_ptr),
                ("use_valid_split_count_reduce", ctypes.c_int32)]
    _defaults_ = dict(q_dtype=DType.BF16, kv_dtype=DType.BF16, batch_size=0, num_heads=16,
                      nhead_kv=1, max_seqlen_q=1, page_size=1, causal=1, persistent=1,
                      softmax_scale=0.0, num_splits=1, split_dtype=DType.FP32, cp_world_size=1,
                      cp_rank=0)


class mla_decode_shape(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("arch", ctypes.c_char_p),
                ("num_heads", ctypes.c_int32), ("num_heads_k", ctypes.c_int32),
                ("max_seqlen_qo", ctypes.c_int32), ("uni_seqlen_qo", ctypes.c_int32),
                ("q_dtype", c_enum), ("kv_dtype", c_enum), ("v_head_dim", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("return_lse", ctypes.c_int32),
                ("causal", ctypes.c_int32), ("persistent", ctypes.c_int32),
                ("cp_round_robin", ctypes.c_int32), ("cp_world_size", ctypes.c_int32),
                ("fast_mode", ctypes.c_int32), ("intra_batch_mode", ctypes.c_int32),
                ("has_scales", ctypes.c_int32), ("enable_experimental", ctypes.c_int32),
                ("flydsl_ps1", ctypes.c_int32), ("use_ps1_asm", ctypes.c_int32),
                ("use_opus", ctypes.c_int32)]
    _defaults_ = dict(num_heads=16, num_heads_k=1, max_seqlen_qo=1, uni_seqlen_qo=-1,
                      q_dtype=DType.BF16, kv_dtype=DType.BF16, v_head_dim=512, page_size=1,
                      return_lse=0, causal=1, persistent=1, cp_round_robin=0, cp_world_size=1,
                      fast_mode=1, intra_batch_mode=0, has_scales=1, enable_experimental=0,
                      flydsl_ps1=0, use_ps1_asm=1, use_opus=0)


class mla_head_plan(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("planner", c_enum), ("plan", c_enum),
                ("planner_accepts", ctypes.c_int32), ("natively_supported", ctypes.c_int32),
                ("qk_batch_ratio", ctypes.c_int32), ("kernel_num_heads", ctypes.c_int32),
                ("seqlen_fold", ctypes.c_int32), ("packed_qo_len_per_wg", ctypes.c_int32),
                ("reduce_supported", ctypes.c_int32), ("backend", c_enum)]
    _defaults_ = dict(planner=Planner.V1_2, plan=HeadPlanKind.UNSUPPORTED, planner_accepts=0,
                      natively_supported=0, qk_batch_ratio=1, kernel_num_heads=0, seqlen_fold=1,
                      packed_qo_len_per_wg=128, reduce_supported=0, backend=0)


class mla_decode_support(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("arch", ctypes.c_char * 32),
                ("enable_experimental", ctypes.c_int32), ("flydsl_ps1", ctypes.c_int32),
                ("planner", c_enum), ("plan", c_enum), ("planner_accepts", ctypes.c_int32),
                ("natively_supported", ctypes.c_int32), ("fold_factor", ctypes.c_int32),
                ("seqlen_fold", ctypes.c_int32), ("native", ctypes.c_int32),
                ("kernel_num_heads", ctypes.c_int32), ("packed_qo_len_per_wg", ctypes.c_int32),
                ("reduce_supported", ctypes.c_int32), ("backend", c_enum),
                ("asm_status", c_enum), ("table_gqa", ctypes.c_int32),
                ("table_qseqlen", ctypes.c_int32), ("asm_kernel", ctypes.c_char * 256),
                ("code_object", ctypes.c_char * 512), ("supported", ctypes.c_int32),
                ("num_reasons", ctypes.c_int32), ("reasons", ctypes.c_char * 1024),
                ("libmla_reducer", ctypes.c_int32)]
    _defaults_ = dict(planner=Planner.V1_2, plan=HeadPlanKind.UNSUPPORTED, fold_factor=1,
                      seqlen_fold=1, packed_qo_len_per_wg=128, backend=0, asm_status=5,
                      table_gqa=-1, table_qseqlen=-1, supported=-1)


class mla_metadata_params(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("arch", ctypes.c_char_p),
                ("num_clusters", ctypes.c_int32), ("batch_size", ctypes.c_int32),
                ("max_seqlen_qo", ctypes.c_int32), ("num_heads", ctypes.c_int32),
                ("num_heads_k", ctypes.c_int32), ("q_dtype", c_enum), ("kv_dtype", c_enum),
                ("page_size", ctypes.c_int32), ("kv_granularity", ctypes.c_int32),
                ("causal", ctypes.c_int32), ("fast_mode", ctypes.c_int32),
                ("intra_batch_mode", ctypes.c_int32), ("max_split_per_batch", ctypes.c_int32),
                ("num_kv_splits", ctypes.c_int32), ("is_cp_round_robin", ctypes.c_int32),
                ("enable_experimental", ctypes.c_int32), ("flydsl_ps1", ctypes.c_int32),
                ("head_group_major", ctypes.c_int32), ("work_overhead_tokens", ctypes.c_int32),
                ("reserved0", ctypes.c_int32), ("split_tail_tokens", ctypes.c_int32)]
    _defaults_ = dict(num_clusters=0, batch_size=1, max_seqlen_qo=1, num_heads=16, num_heads_k=1,
                      q_dtype=DType.BF16, kv_dtype=DType.BF16, page_size=1, kv_granularity=16,
                      causal=1, fast_mode=1, intra_batch_mode=0, max_split_per_batch=-1,
                      num_kv_splits=32, is_cp_round_robin=0, enable_experimental=0, flydsl_ps1=0,
                      head_group_major=0, work_overhead_tokens=-1, split_tail_tokens=-1)


class mla_metadata_sizes(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("work_metadata_len", ctypes.c_int64),
                ("work_indptr_len", ctypes.c_int64), ("work_info_set_rows", ctypes.c_int64),
                ("reduce_indptr_len", ctypes.c_int64), ("reduce_final_map_rows", ctypes.c_int64),
                ("reduce_partial_map_len", ctypes.c_int64), ("partial_rows", ctypes.c_int64),
                ("workspace_bytes", ctypes.c_int64), ("num_clusters", ctypes.c_int32),
                ("kernel_num_heads", ctypes.c_int32), ("qk_batch_ratio", ctypes.c_int32)]


class mla_metadata_buffers(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("work_metadata", c_ptr), ("work_metadata_len", ctypes.c_int64),
                ("work_indptr", c_ptr), ("work_indptr_len", ctypes.c_int64),
                ("work_info_set", c_ptr), ("work_info_set_rows", ctypes.c_int64),
                ("reduce_indptr", c_ptr), ("reduce_indptr_len", ctypes.c_int64),
                ("reduce_final_map", c_ptr), ("reduce_final_map_rows", ctypes.c_int64),
                ("reduce_partial_map", c_ptr), ("reduce_partial_map_len", ctypes.c_int64)]


class mla_plan_summary(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("num_works", ctypes.c_int32),
                ("num_tiles", ctypes.c_int32), ("num_split_tiles", ctypes.c_int32),
                ("num_partials", ctypes.c_int32), ("num_partial_rows", ctypes.c_int32),
                ("max_works_per_cluster", ctypes.c_int32), ("total_kv_blocks", ctypes.c_int64),
                ("max_cluster_cost", ctypes.c_int64), ("num_sections", ctypes.c_int32),
                ("reserved0", ctypes.c_int32), ("work_overhead_blocks", ctypes.c_int32),
                ("reserved1", ctypes.c_int32), ("split_tail_blocks", ctypes.c_int32),
                ("reserved2", ctypes.c_int32), ("active_clusters", ctypes.c_int32)]


class mla_host_problem(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("batch_size", ctypes.c_int32),
                ("num_heads", ctypes.c_int32), ("max_seqlen_q", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("num_pages", ctypes.c_int32),
                ("causal", ctypes.c_int32), ("q_dtype", c_enum), ("kv_dtype", c_enum),
                ("softmax_scale", ctypes.c_float), ("q_scale", ctypes.c_float),
                ("kv_scale", ctypes.c_float),
                ("q", c_ptr), ("q_stride_token", ctypes.c_int64), ("q_stride_head", ctypes.c_int64),
                ("kv_cache", c_ptr), ("qo_indptr", c_ptr), ("kv_indptr", c_ptr),
                ("kv_page_indices", c_ptr), ("kv_last_page_lens", c_ptr),
                ("fp8_p_quant", ctypes.c_int32), ("g_kv_indptr", c_ptr),
                ("cp_world_size", ctypes.c_int32), ("cp_rank", ctypes.c_int32)]
    _defaults_ = dict(batch_size=0, num_heads=16, max_seqlen_q=1, page_size=1, num_pages=0,
                      causal=1, q_dtype=DType.BF16, kv_dtype=DType.BF16, softmax_scale=0.0,
                      q_scale=1.0, kv_scale=1.0, q_stride_token=0, q_stride_head=0, fp8_p_quant=0,
                      cp_world_size=1, cp_rank=0)


class mla_merge_args(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("world_size", ctypes.c_int32),
                ("total_q", ctypes.c_int32), ("num_heads", ctypes.c_int32),
                ("partial_dtype", c_enum), ("out_dtype", c_enum), ("partial_out", c_ptr),
                ("partial_lse", c_ptr), ("out", c_ptr), ("lse", c_ptr),
                ("partial_out_rank_stride", ctypes.c_int64),
                ("partial_lse_rank_stride", ctypes.c_int64)]
    _defaults_ = dict(world_size=1, total_q=0, num_heads=16, partial_dtype=DType.FP32,
                      out_dtype=DType.BF16, partial_out_rank_stride=0, partial_lse_rank_stride=0)


class mla_decode_args(_Versioned):
    _fields_ = [("struct_size", ctypes.c_size_t), ("q_dtype", c_enum), ("kv_dtype", c_enum),
                ("batch_size", ctypes.c_int32), ("num_heads", ctypes.c_int32),
                ("max_seqlen_q", ctypes.c_int32), ("total_q", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("num_pages", ctypes.c_int32),
                ("causal", ctypes.c_int32), ("softmax_scale", ctypes.c_float),
                ("q_scale", c_ptr), ("kv_scale", c_ptr),
                ("q", c_ptr), ("q_stride_token", ctypes.c_int64), ("q_stride_head", ctypes.c_int64),
                ("kv_cache", c_ptr), ("kv_stride_page", ctypes.c_int64),
                ("qo_indptr", c_ptr), ("kv_indptr", c_ptr), ("kv_page_indices", c_ptr),
                ("kv_last_page_lens", c_ptr), ("num_page_indices", ctypes.c_int64),
                ("block_table", c_ptr), ("block_table_stride", ctypes.c_int32),
                ("seq_lens", c_ptr),
                ("out", c_ptr), ("out_stride_token", ctypes.c_int64),
                ("out_stride_head", ctypes.c_int64), ("lse", c_ptr),
                ("plan", ctypes.POINTER(mla_metadata_buffers)),
                ("plan_params", ctypes.POINTER(mla_metadata_params)),
                ("workspace", c_ptr), ("workspace_bytes", ctypes.c_size_t),
                ("error_flag", c_ptr), ("g_kv_indptr", c_ptr),
                ("cp_world_size", ctypes.c_int32), ("cp_rank", ctypes.c_int32),
                ("out_dtype", c_enum), ("tile_counters", c_ptr), ("tile_counters_len", ctypes.c_int64),
                ("active_clusters", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("no_split_tiles", ctypes.c_int32)]
    _defaults_ = dict(q_dtype=DType.BF16, kv_dtype=DType.BF16, batch_size=0, num_heads=16,
                      max_seqlen_q=1, total_q=0, page_size=1, num_pages=0, causal=1,
                      softmax_scale=0.0, q_stride_token=0, q_stride_head=0, kv_stride_page=0,
                      num_page_indices=0, block_table_stride=0, out_stride_token=0,
                      out_stride_head=0, workspace_bytes=0, cp_world_size=1, cp_rank=0,
                      out_dtype=DType.BF16, tile_counters_len=0, active_clusters=0, reserved0=0,
                      no_split_tiles=0)


# Every public struct with the name of its INIT macro (None: the header has none).
STRUCTS = {
    "mla_arch_info": (mla_arch_info, "MLA_ARCH_INFO_INIT"),
    "mla_context_options": (mla_context_options, "MLA_CONTEXT_OPTIONS_INIT"),
    "mla_amd_stage1_args": (mla_amd_stage1_args, "MLA_AMD_STAGE1_ARGS_INIT"),
    "mla_decode_shape": (mla_decode_shape, "MLA_DECODE_SHAPE_INIT"),
    "mla_head_plan": (mla_head_plan, "MLA_HEAD_PLAN_INIT"),
    "mla_decode_support": (mla_decode_support, "MLA_DECODE_SUPPORT_INIT"),
    "mla_metadata_params": (mla_metadata_params, "MLA_METADATA_PARAMS_INIT"),
    "mla_metadata_sizes": (mla_metadata_sizes, None),
    "mla_metadata_buffers": (mla_metadata_buffers, None),
    "mla_plan_summary": (mla_plan_summary, None),
    "mla_host_problem": (mla_host_problem, "MLA_HOST_PROBLEM_INIT"),
    "mla_merge_args": (mla_merge_args, "MLA_MERGE_ARGS_INIT"),
    "mla_decode_args": (mla_decode_args, "MLA_DECODE_ARGS_INIT"),
}
