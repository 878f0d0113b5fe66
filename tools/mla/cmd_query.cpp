// cmd_query.cpp - `mla query`: can this decode shape run on this arch, on which kernel, and if
// not, why not. Prints mla_decode_shape_support as a table, or as JSON with --json. Device-free.
// AITER_ENABLE_EXPERIMENTAL, AITER_MLA_DECODE_PS1_FLYDSL, AITER_MLA_DECODE_PS1_ASM and
// AITER_MLA_USE_OPUS (atoi, as aiter parses them) only give the flags' defaults.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "commands.h"
#include "mla_c_api.h"

namespace {

void usage(FILE* f) {
    std::fprintf(f,
        "usage: mla query --arch ARCH --heads H [--qlen L] [--q DTYPE] [--kv DTYPE] [--lse]\n"
        "                 [--no-causal] [--non-persistent] [--page-size N] [--v-head-dim D]\n"
        "                 [--cprr] [--cp-world-size W] [--no-fast-mode] [--intra-batch]\n"
        "                 [--no-scales] [--experimental 0|1] [--flydsl-ps1 0|1]\n"
        "                 [--ps1-asm 0|1] [--opus 0|1] [--root DIR] [--json]\n"
        "  ARCH: gfx942, gfx950, gfx1250, sm_90a. DTYPE: bf16 (default), fp16, fp8, fp8_fnuz, byte.\n"
        "  The flags default to AITER_ENABLE_EXPERIMENTAL, AITER_MLA_DECODE_PS1_FLYDSL,\n"
        "  AITER_MLA_DECODE_PS1_ASM (default 1) and AITER_MLA_USE_OPUS.\n"
        "  --root: code-object root (AMD archs: an aiter installation's hsa/ directory).\n"
        "  Exit status: 0 supported, 1 not supported, 3 unknown, 2 bad arguments.\n");
}

int env_flag(const char* name, int fallback) {
    const char* v = std::getenv(name);
    return (v && *v) ? std::atoi(v) : fallback;
}

bool parse_int(const char* s, int* out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (*end != '\0' || v < -2147483647L || v > 2147483647L) return false;
    *out = static_cast<int>(v);
    return true;
}

// JSON string with the characters that need escaping escaped.
std::string json_str(const char* s) {
    std::string o = "\"";
    for (; *s; ++s) {
        const unsigned char c = static_cast<unsigned char>(*s);
        if (c == '"' || c == '\\') {
            o += '\\';
            o += static_cast<char>(c);
        } else if (c == '\n') {
            o += "\\n";
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof(b), "\\u%04x", c);
            o += b;
        } else {
            o += static_cast<char>(c);
        }
    }
    return o + "\"";
}

const char* tri(int v) { return v == 1 ? "true" : v == 0 ? "false" : "null"; }

void print_json(const mla_decode_shape& s, const mla_decode_support& v) {
    std::printf("{\n");
    std::printf("  \"arch\": %s,\n", json_str(v.arch).c_str());
    std::printf("  \"num_heads\": %d,\n  \"max_seqlen_qo\": %d,\n", s.num_heads, s.max_seqlen_qo);
    std::printf("  \"q_dtype\": \"%s\",\n  \"kv_dtype\": \"%s\",\n", mla_dtype_string(s.q_dtype),
                mla_dtype_string(s.kv_dtype));
    std::printf("  \"page_size\": %d,\n  \"return_lse\": %s,\n  \"causal\": %s,\n", s.page_size,
                tri(s.return_lse != 0), tri(s.causal != 0));
    std::printf("  \"persistent\": %s,\n  \"cp_round_robin\": %s,\n", tri(s.persistent != 0),
                tri(s.cp_round_robin != 0));
    std::printf("  \"enable_experimental\": %s,\n  \"flydsl_ps1\": %s,\n",
                tri(v.enable_experimental != 0), tri(v.flydsl_ps1 != 0));
    std::printf("  \"planner\": \"%s\",\n  \"plan\": \"%s\",\n", mla_planner_string(v.planner),
                mla_head_plan_string(v.plan));
    std::printf("  \"planner_accepts\": %s,\n  \"natively_supported\": %s,\n",
                tri(v.planner_accepts != 0), tri(v.natively_supported != 0));
    std::printf("  \"fold_factor\": %d,\n  \"seqlen_fold\": %d,\n  \"native\": %s,\n",
                v.fold_factor, v.seqlen_fold, tri(v.native != 0));
    std::printf("  \"kernel_num_heads\": %d,\n  \"packed_qo_len_per_wg\": %d,\n",
                v.kernel_num_heads, v.packed_qo_len_per_wg);
    std::printf("  \"reduce_supported\": %s,\n", tri(v.reduce_supported != 0));
    std::printf("  \"libmla_reducer\": %s,\n", tri(v.libmla_reducer != 0));
    std::printf("  \"backend\": \"%s\",\n  \"asm_status\": \"%s\",\n", mla_backend_string(v.backend),
                mla_asm_status_string(v.asm_status));
    std::printf("  \"table_gqa\": %d,\n  \"table_qseqlen\": %d,\n", v.table_gqa, v.table_qseqlen);
    std::printf("  \"asm_kernel\": %s,\n", v.asm_kernel[0] ? json_str(v.asm_kernel).c_str() : "null");
    std::printf("  \"code_object\": %s,\n",
                v.code_object[0] ? json_str(v.code_object).c_str() : "null");
    std::printf("  \"supported\": %s,\n  \"reasons\": [", tri(v.supported));
    const char* p = v.reasons;
    bool first = true;
    while (*p) {
        const char* nl = std::strchr(p, '\n');
        const std::string line = nl ? std::string(p, nl) : std::string(p);
        std::printf("%s\n    %s", first ? "" : ",", json_str(line.c_str()).c_str());
        first = false;
        p = nl ? nl + 1 : p + line.size();
    }
    std::printf("%s]\n}\n", first ? "" : "\n  ");
}

void print_table(const mla_decode_shape& s, const mla_decode_support& v) {
    std::printf("shape        %s  heads %d  qlen %d  q %s  kv %s  page %d  %s%s%s%s\n", v.arch,
                s.num_heads, s.max_seqlen_qo, mla_dtype_string(s.q_dtype),
                mla_dtype_string(s.kv_dtype), s.page_size, s.persistent ? "persistent" : "non-persistent",
                s.causal ? " causal" : " non-causal", s.return_lse ? " +lse" : "",
                s.cp_round_robin ? " +cprr" : "");
    std::printf("supported    %s\n", v.supported == 1 ? "yes" : v.supported == 0 ? "no" : "unknown");
    std::printf("planner      %s  plan %s  accepts %s\n", mla_planner_string(v.planner),
                mla_head_plan_string(v.plan), v.planner_accepts ? "yes" : "no");
    std::printf("heads        kernel %d  fold x%d  seqlen fold x%d  native %s (natively supported %s)\n",
                v.kernel_num_heads, v.fold_factor, v.seqlen_fold, v.native ? "yes" : "no",
                v.natively_supported ? "yes" : "no");
    std::printf("packing      %d qo rows per workgroup  reducer %s%s\n", v.packed_qo_len_per_wg,
                v.reduce_supported ? "yes" : "no",
                v.libmla_reducer ? " (libmla's)"
                                 : " (aiter's mla_reduce_v1: libmla ships no reducer for this arch)");
    std::printf("backend      %s  (experimental %d, flydsl_ps1 %d)\n", mla_backend_string(v.backend),
                v.enable_experimental, v.flydsl_ps1);
    std::printf("table        %s", mla_asm_status_string(v.asm_status));
    if (v.table_gqa >= 0) std::printf("  key gqa %d qseqlen %d", v.table_gqa, v.table_qseqlen);
    std::printf("\n");
    if (v.asm_kernel[0]) std::printf("kernel       %s\n", v.asm_kernel);
    if (v.code_object[0]) std::printf("code object  %s\n", v.code_object);
    const char* p = v.reasons;
    bool first = true;
    while (*p) {
        const char* nl = std::strchr(p, '\n');
        const std::string line = nl ? std::string(p, nl) : std::string(p);
        std::printf("%s %s\n", first ? "reasons     " : "            ", line.c_str());
        first = false;
        p = nl ? nl + 1 : p + line.size();
    }
}

}  // namespace

int cmd_query(int argc, char** argv) {
    mla_decode_shape s = MLA_DECODE_SHAPE_INIT;
    s.enable_experimental = env_flag("AITER_ENABLE_EXPERIMENTAL", 0);
    s.flydsl_ps1 = env_flag("AITER_MLA_DECODE_PS1_FLYDSL", 0);
    s.use_ps1_asm = env_flag("AITER_MLA_DECODE_PS1_ASM", 1);
    s.use_opus = env_flag("AITER_MLA_USE_OPUS", 0);
    std::string arch;
    const char* root = nullptr;
    bool json = false;
    bool have_heads = false;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
        auto int_opt = [&](int* dst) {
            if (!parse_int(next, dst)) {
                std::fprintf(stderr, "mla query: %s needs an integer\n", a.c_str());
                return false;
            }
            ++i;
            return true;
        };
        auto dtype_opt = [&](mla_dtype* dst) {
            if (!next || mla_dtype_from_string(next, dst) != MLA_SUCCESS) {
                std::fprintf(stderr, "mla query: %s: %s\n", a.c_str(),
                             next ? mla_last_error() : "needs a dtype");
                return false;
            }
            ++i;
            return true;
        };
        bool ok = true;
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--arch" && next) {
            arch = next;
            ++i;
        } else if (a == "--heads") {
            ok = int_opt(&s.num_heads);
            have_heads = ok;
        } else if (a == "--qlen") {
            ok = int_opt(&s.max_seqlen_qo);
        } else if (a == "--q") {
            ok = dtype_opt(&s.q_dtype);
        } else if (a == "--kv") {
            ok = dtype_opt(&s.kv_dtype);
        } else if (a == "--page-size") {
            ok = int_opt(&s.page_size);
        } else if (a == "--v-head-dim") {
            ok = int_opt(&s.v_head_dim);
        } else if (a == "--cp-world-size") {
            ok = int_opt(&s.cp_world_size);
        } else if (a == "--experimental") {
            ok = int_opt(&s.enable_experimental);
        } else if (a == "--flydsl-ps1") {
            ok = int_opt(&s.flydsl_ps1);
        } else if (a == "--ps1-asm") {
            ok = int_opt(&s.use_ps1_asm);
        } else if (a == "--opus") {
            ok = int_opt(&s.use_opus);
        } else if (a == "--lse") {
            s.return_lse = 1;
        } else if (a == "--no-causal") {
            s.causal = 0;
        } else if (a == "--non-persistent") {
            s.persistent = 0;
        } else if (a == "--cprr") {
            s.cp_round_robin = 1;
        } else if (a == "--no-fast-mode") {
            s.fast_mode = 0;
        } else if (a == "--intra-batch") {
            s.intra_batch_mode = 1;
        } else if (a == "--no-scales") {
            s.has_scales = 0;
        } else if (a == "--root" && next) {
            root = next;
            ++i;
        } else if (a == "--json") {
            json = true;
        } else {
            std::fprintf(stderr, "mla query: unknown or incomplete option '%s'\n\n", a.c_str());
            usage(stderr);
            return 2;
        }
        if (!ok) return 2;
    }
    if (arch.empty() || !have_heads) {
        std::fprintf(stderr, "mla query: --arch and --heads are required\n\n");
        usage(stderr);
        return 2;
    }
    s.arch = arch.c_str();
    if (root && mla_set_codeobject_root(root) != MLA_SUCCESS) {
        std::fprintf(stderr, "mla query: --root: %s\n", mla_last_error());
        return 2;
    }
    mla_decode_support v = MLA_DECODE_SUPPORT_INIT;
    const mla_status st = mla_decode_shape_support(&s, &v);
    if (st != MLA_SUCCESS) {
        std::fprintf(stderr, "mla query: %s: %s\n", mla_status_string(st), mla_last_error());
        return 2;
    }
    if (json)
        print_json(s, v);
    else
        print_table(s, v);
    return v.supported == 1 ? 0 : v.supported == 0 ? 1 : 3;
}
