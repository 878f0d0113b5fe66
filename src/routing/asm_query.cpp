// asm_query.cpp - remap of a decode request to its code-object table key, and the table lookup.
// gfx942/gfx950: aiter asm_mla.cu stage-1 remap (§5.3). gfx1250: the non-persistent page-64
// stage-1 kernels (§5.3 last paragraph, aiter PR #6107 A3 and its page-size follow-up).
// sm_90a: libmla's `mla_decode` table keyed by the kernel's row tile. PS1 FP8: `mla_dsl` (§5.5).
#include <sstream>

#include "routing/rules.h"
#include "routing/table_index.h"

namespace mla::route {
namespace {

const char* const kAsmCols[] = {"qType", "kvType", "Gqa",  "ps",  "qSeqLen",
                                "prefill", "causal", "lse", "cprr"};
const char* const kDslCols[] = {"qType", "kvType", "Gqa", "qSeqLen", "causal", "lse", "cprr"};

// The table's spelling of a dtype: aiter's C++ sees one "fp8" for both variants; libmla's
// sm_90a tables only know e4m3fn, so e4m3fnuz keeps its own name there (and finds no row).
std::string table_dtype(Arch a, mla_dtype d) {
    if (d == MLA_DTYPE_FP8_E4M3FNUZ && a != Arch::sm90a) return "fp8";
    return dtype_name(d);
}

struct Key {
    std::string q, kv;
    int gqa = 0, ps = 0, qlen = 0, prefill = 0, causal = 0, lse = 0, cprr = 0;
};

struct Remap {
    mla_asm_status status = MLA_ASM_OK;  // OK (look the key up), REMAP_REJECT or NO_KERNEL
    std::string detail;
    Key key;
};

Remap reject(const std::string& why) {
    Remap r;
    r.status = MLA_ASM_REMAP_REJECT;
    r.detail = why;
    return r;
}

// aiter asm_mla.cu (Aug 2026) for gfx942 / gfx950, §5.3, in its order.
Remap remap_gfx9(const AsmRequest& q) {
    const bool g950 = q.arch == Arch::gfx950;
    Remap r;
    Key& k = r.key;
    k.q = table_dtype(q.arch, q.q);
    k.kv = table_dtype(q.arch, q.kv);
    const int gqa = q.num_heads, l = q.max_seqlen_q;
    const bool ps = q.persistent;
    const bool bf16 = k.q == "bf16" && k.kv == "bf16";
    const bool fp8 = k.q == "fp8" && k.kv == "fp8";
    k.gqa = gqa;
    k.qlen = l;
    k.ps = ps ? 1 : 0;
    k.causal = (q.causal || l == 1) ? 1 : 0;  // causal is a no-op at qlen 1: reuse the masked kernel
    if (gqa == 128) {
        k.qlen = 0;
        if (q.arch == Arch::gfx942 && bf16) k.ps = 0;
    } else if (gqa == 16) {
        if (bf16) {
            if (ps) {
                if (l <= 4) k.qlen = 4;
            } else {
                k.qlen = l == 1 ? 1 : l <= 4 ? 4 : 8;
            }
        } else if (k.q == "bf16" && (k.kv == "fp8" || k.kv == "byte")) {
            if (ps && l <= 4) k.qlen = 4;
        } else if (k.q == "fp8") {
            if (l == 1) k.qlen = 1;
            else if (l == 2) k.qlen = 2;
            else if (l <= 4) k.qlen = 4;
            else if (ps && g950) {
                k.gqa = 32;
                k.qlen = 4;
            } else {
                return reject("fp8 gqa 16 with max_seqlen_q " + std::to_string(l) +
                              " > 4 needs the gfx950 persistent kernel");
            }
        }
    } else if (gqa == 32) {
        if (bf16 && !ps) {
            k.qlen = 0;
        } else if (fp8) {
            if (l == 1 && !ps) k.qlen = 1;
            else if (l >= 3 && ps && g950) k.qlen = 4;
            else if (l == 2 && ps) k.qlen = 2;
            else if (l == 1 && ps) k.qlen = 1;
            else
                return reject("fp8 gqa 32 has no " + std::string(ps ? "persistent" : "non-persistent") +
                              " kernel for max_seqlen_q " + std::to_string(l));
        }
    } else if (gqa == 64) {
        if (bf16 && !ps) {
            k.qlen = l == 1 ? 1 : 0;
        } else if (fp8) {
            if (!ps) return reject("fp8 gqa 64 only supports persistent mode");
            k.qlen = l == 1 ? 1 : 4;
        }
    }
    // gqa 8 only changes the kernel's sub_Q tiling, not the key.
    if (g950 && ps) {  // gfx950 persistent overrides, first match, each packs gqa*qlen rows
        if (bf16 && (gqa * l >= 128 || gqa > 64) && gqa != 48) {
            k.gqa = 32; k.qlen = 4;
        } else if (bf16 && (gqa * l >= 64 || gqa >= 16)) {
            k.gqa = 64; k.qlen = 1;
        } else if (fp8 && ((gqa == 32 && l >= 4) || (gqa == 64 && l >= 2) || gqa == 128)) {
            k.gqa = 32; k.qlen = 4;
        } else if (fp8 && ((gqa == 16 && (l == 3 || l == 4)) || (gqa == 32 && (l == 2 || l == 3)) ||
                           (gqa == 64 && l == 1))) {
            k.gqa = 16; k.qlen = 4;
        }
    }
    k.lse = (q.lse && ps) ? 1 : 0;
    k.cprr = q.cprr ? 1 : 0;
    return r;
}

// gfx1250 stage 1: non-persistent page-64 kernels only, fp8/fp8, (gqa, qlen) in the dispatcher's
// list; looked up with ps 0, causal 0, lse 0 (aiter PR #6107 A3; page size: its follow-up).
Remap remap_gfx1250(const AsmRequest& q) {
    Remap r;
    Key& k = r.key;
    k.q = table_dtype(q.arch, q.q);
    k.kv = table_dtype(q.arch, q.kv);
    k.gqa = q.num_heads;
    k.qlen = q.max_seqlen_q;
    auto no_kernel = [&r](const char* why) {
        r.status = MLA_ASM_NO_KERNEL;
        r.detail = why;
        return r;
    };
    if (q.persistent) return no_kernel("gfx1250 stage-1 asm kernels are non-persistent only");
    if (q.cprr) return no_kernel("gfx1250 stage-1 asm kernels have no round-robin CP variant");
    if (q.lse) return no_kernel("gfx1250 stage-1 asm kernels write no final LSE (lse=0 rows only)");
    if (q.page_size != 0 && q.page_size != 64)
        return no_kernel("gfx1250 stage-1 asm kernels need page_size 64");
    const int g = q.num_heads, l = q.max_seqlen_q;
    const bool listed = (g == 8 && l >= 1 && l <= 4) || (g == 16 && (l == 1 || l == 2 || l == 4)) ||
                        ((g == 32 || g == 64 || g == 128) && l == 1);
    if (!listed) {
        std::ostringstream os;
        os << "gfx1250 stage-1 asm has no (gqa " << g << ", qlen " << l
           << ") variant (8 x 1..4, 16 x 1/2/4, 32/64/128 x 1)";
        r = reject(os.str());
        return r;
    }
    return r;  // ps, causal, lse, cprr, prefill stay 0
}

// sm_90a: the kernel's row tile M is the key's Gqa, qSeqLen is 0 (any).
Remap remap_sm90(const AsmRequest& q) {
    Remap r;
    Key& k = r.key;
    const int m = sm90_row_tile(q.num_heads, q.max_seqlen_q);
    if (m < 0) {
        std::ostringstream os;
        os << "sm_90a kernels take at most 64 heads per row; " << q.num_heads
           << " heads must be folded first (the head plan does)";
        return reject(os.str());
    }
    k.q = table_dtype(q.arch, q.q);
    k.kv = table_dtype(q.arch, q.kv);
    k.gqa = m;
    k.qlen = 0;
    k.ps = q.persistent ? 1 : 0;
    k.causal = (q.causal || q.max_seqlen_q == 1) ? 1 : 0;
    k.lse = (q.lse && q.persistent) ? 1 : 0;
    k.cprr = q.cprr ? 1 : 0;
    return r;
}

// Tables of an arch under root, or nullptr.
std::shared_ptr<const reg::ArchTables> arch_tables(Arch a, const std::string& root) {
    return reg::Registry::global().arch(arch_name(a), root);
}

}  // namespace

int sm90_row_tile(int hk, int max_seqlen_q) {
    if (hk < 1 || hk > 64) return -1;
    const int t = std::min(max_seqlen_q, std::max(1, 64 / hk));
    const int rows = t * hk;
    return rows <= 16 ? 16 : rows <= 32 ? 32 : 64;
}

TableVerdict asm_query(const AsmRequest& req, const std::string& root) {
    const Remap r = req.arch == Arch::sm90a     ? remap_sm90(req)
                    : req.arch == Arch::gfx1250 ? remap_gfx1250(req)
                                                : remap_gfx9(req);
    TableVerdict v;
    v.detail = r.detail;
    if (r.status == MLA_ASM_REMAP_REJECT) {
        v.status = MLA_ASM_REMAP_REJECT;
        return v;
    }
    v.table_gqa = r.key.gqa;
    v.table_qseqlen = r.key.qlen;
    if (r.status == MLA_ASM_NO_KERNEL) {
        v.status = MLA_ASM_NO_KERNEL;
        return v;
    }
    const char* table_name = req.arch == Arch::sm90a ? "mla_decode" : "mla_asm";
    v.tables = arch_tables(req.arch, root);
    const reg::Table* t = v.tables ? v.tables->table(table_name) : nullptr;
    if (!t) {
        v.status = MLA_ASM_ARCH_NOT_BUILT;
        v.detail = std::string("no ") + table_name + ".csv for " + arch_name(req.arch) +
                   " under the code-object root";
        return v;
    }
    const Key& k = r.key;
    const std::string vals[9] = {k.q, k.kv, std::to_string(k.gqa), std::to_string(k.ps),
                                 std::to_string(k.qlen), std::to_string(k.prefill),
                                 std::to_string(k.causal), std::to_string(k.lse),
                                 std::to_string(k.cprr)};
    v.row = find_row(v.tables, *t, kAsmCols, 9, vals);
    v.status = v.row ? MLA_ASM_OK : MLA_ASM_NO_KERNEL;
    return v;
}

TableVerdict ps1_fp8_asm_query(Arch arch, int num_heads, int max_seqlen_q, bool causal, bool lse,
                               bool cprr, const std::string& root) {
    TableVerdict v;
    v.table_gqa = num_heads;
    v.tables = arch_tables(arch, root);
    const reg::Table* t = v.tables ? v.tables->table("mla_dsl") : nullptr;
    if (!t) {
        v.status = MLA_ASM_ARCH_NOT_BUILT;
        v.detail = std::string("no mla_dsl.csv for ") + arch_name(arch) + " under the code-object root";
        return v;
    }
    std::string vals[7] = {"fp8", "fp8", std::to_string(num_heads), std::to_string(max_seqlen_q),
                           causal ? "1" : "0", lse ? "1" : "0", cprr ? "1" : "0"};
    v.row = find_row(v.tables, *t, kDslCols, 7, vals);
    v.table_qseqlen = max_seqlen_q;
    if (!v.row) {  // qSeqLen 0 = any
        vals[3] = "0";
        v.row = find_row(v.tables, *t, kDslCols, 7, vals);
        v.table_qseqlen = v.row ? 0 : max_seqlen_q;
    }
    v.status = v.row ? MLA_ASM_OK : MLA_ASM_NO_KERNEL;
    return v;
}

}  // namespace mla::route
