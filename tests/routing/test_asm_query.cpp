// test_asm_query.cpp - the asm remap (§5.3) and table statuses through the aiter-compatible C
// queries, on the fixture tables (tests/fixtures/<arch>/...): OK, REMAP_REJECT, NO_KERNEL,
// ARCH_NOT_BUILT, the packed return value and the kernel_buf rules.
#include <cstring>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "routing_test.h"

using rt_test::unpack;

namespace {

struct Q {
    int status = -1, gqa = -1, qseqlen = -1;
    std::string kernel;
};

// mla_decode_asm_query with a 256-byte buffer (as aiter's Python does).
Q asmq(const char* arch, const char* q, const char* kv, int heads, int qlen, int persistent,
       int causal = 1, int lse = 0, int cprr = 0) {
    char buf[256];
    std::memset(buf, 'x', sizeof(buf));
    const int r = mla_decode_asm_query(arch, q, kv, heads, 1, qlen, persistent, causal, lse, cprr,
                                       buf, sizeof(buf), nullptr);
    INFO(mla_last_error());
    REQUIRE(r >= 0);
    const auto p = unpack(r);
    CHECK(r == (p.status | p.gqa << 8 | p.qseqlen << 16));
    return {p.status, p.gqa, p.qseqlen, buf};
}

void expect(const Q& got, int status, int gqa, int qseqlen, const char* kernel) {
    CHECK(got.status == status);
    CHECK(got.gqa == gqa);
    CHECK(got.qseqlen == qseqlen);
    CHECK(got.kernel == kernel);
}

const int OK = MLA_ASM_OK, REJECT = MLA_ASM_REMAP_REJECT, NOK = MLA_ASM_NO_KERNEL,
          NOTBUILT = MLA_ASM_ARCH_NOT_BUILT;

}  // namespace

TEST_CASE("gfx942 remap and lookup", "[routing][asm]") {
    rt_test::use_fixtures();
    // LSE availability: 128 heads have no lse row, 64 heads at qlen 1 do.
    expect(asmq("gfx942", "fp8", "fp8", 128, 1, 1, 1, 1), NOK, 128, 0, "");
    expect(asmq("gfx942", "fp8", "fp8", 128, 1, 1, 1, 0), OK, 128, 0, "fx942_fp8_g128_ps");
    expect(asmq("gfx942", "fp8", "fp8", 64, 1, 1, 1, 1), OK, 64, 1, "fx942_fp8_g64_q1_lse_ps");
    expect(asmq("gfx942", "fp8", "fp8", 64, 2, 1), NOK, 64, 4, "");
    expect(asmq("gfx942", "fp8", "fp8", 64, 1, 0), REJECT, 0, 0, "");
    mla::route::AsmRequest rq;  // the remap's own reason (shape support appends it)
    rq.arch = mla::route::Arch::gfx942;
    rq.q = rq.kv = MLA_DTYPE_FP8_E4M3FNUZ;
    rq.num_heads = 64;
    rq.max_seqlen_q = 1;
    rq.persistent = false;
    CHECK(mla::route::asm_query(rq).detail == "fp8 gqa 64 only supports persistent mode");
    // fp8 gqa 16: qlen 1/2/<=4 keep their key; > 4 needs gfx950 persistent.
    expect(asmq("gfx942", "fp8", "fp8", 16, 3, 1), OK, 16, 4, "fx942_fp8_g16_q4_ps");
    expect(asmq("gfx942", "fp8", "fp8", 16, 5, 1), REJECT, 0, 0, "");
    // fp8 gqa 32: qlen 2 persistent; qlen >= 3 persistent only on gfx950; non-persistent qlen 1 only.
    expect(asmq("gfx942", "fp8", "fp8", 32, 2, 1), OK, 32, 2, "fx942_fp8_g32_q2_ps");
    expect(asmq("gfx942", "fp8", "fp8", 32, 3, 1), REJECT, 0, 0, "");
    expect(asmq("gfx942", "fp8", "fp8", 32, 2, 0), REJECT, 0, 0, "");
    expect(asmq("gfx942", "fp8", "fp8", 32, 1, 0), NOK, 32, 1, "");
    // bf16 gqa 128 on gfx942 always takes the non-persistent row.
    expect(asmq("gfx942", "bf16", "bf16", 128, 3, 1), OK, 128, 0, "fx942_bf16_g128_np");
    // bf16 gqa 16: persistent qlen <= 4 -> 4; non-persistent 1 / <=4 -> 4 / >4 -> 8.
    expect(asmq("gfx942", "bf16", "bf16", 16, 3, 1), OK, 16, 4, "fx942_bf16_g16_q4_ps");
    expect(asmq("gfx942", "bf16", "bf16", 16, 5, 1), NOK, 16, 5, "");
    expect(asmq("gfx942", "bf16", "bf16", 16, 5, 0), OK, 16, 8, "fx942_bf16_g16_q8_np");
    expect(asmq("gfx942", "bf16", "bf16", 16, 3, 0), NOK, 16, 4, "");
    expect(asmq("gfx942", "bf16", "fp8", 16, 2, 1), OK, 16, 4, "fx942_bf16fp8_g16_q4_ps");
    expect(asmq("gfx942", "bf16", "byte", 16, 1, 1), OK, 16, 4, "fx942_bf16byte_g16_q4_ps");
    expect(asmq("gfx942", "bf16", "bf16", 8, 2, 1), OK, 8, 2, "fx942_bf16_g8_q2_ps");
    // fp8_fnuz is aiter's "fp8"; lse only counts for persistent launches; causal is forced at qlen 1.
    expect(asmq("gfx942", "fp8_fnuz", "fp8_fnuz", 64, 1, 1), OK, 64, 1, "fx942_fp8_g64_q1_ps");
    expect(asmq("gfx942", "fp8", "fp8", 16, 1, 0, 1, 1), OK, 16, 1, "fx942_fp8_g16_q1_np");
    expect(asmq("gfx942", "fp8", "fp8", 16, 1, 1, 0), OK, 16, 1, "fx942_fp8_g16_q1_ps");
    expect(asmq("gfx942", "fp8", "fp8", 16, 2, 1, 0), NOK, 16, 2, "");
    // gfx942's table has no cprr column: round-robin finds nothing; prefill rows never match.
    expect(asmq("gfx942", "fp8", "fp8", 16, 1, 1, 1, 0, 1), NOK, 16, 1, "");
    expect(asmq("gfx942", "bf16", "bf16", 16, 1, 0, 0), NOK, 16, 1, "");
}

TEST_CASE("gfx950 remap and persistent overrides", "[routing][asm]") {
    rt_test::use_fixtures();
    // LSE availability: 16 heads at qlen 2 has no lse row; 32/64/128 at qlen 2 remap to rows that do.
    expect(asmq("gfx950", "fp8", "fp8", 16, 2, 1, 1, 1), NOK, 16, 2, "");
    expect(asmq("gfx950", "fp8", "fp8", 32, 2, 1, 1, 1), OK, 16, 4, "fx950_fp8_g16_q4_lse_ps");
    expect(asmq("gfx950", "fp8", "fp8", 64, 2, 1, 1, 1), OK, 32, 4, "fx950_fp8_g32_q4_lse_ps");
    expect(asmq("gfx950", "fp8", "fp8", 128, 2, 1, 1, 1), OK, 32, 4, "fx950_fp8_g32_q4_lse_ps");
    expect(asmq("gfx950", "fp8", "fp8", 16, 5, 1), OK, 32, 4, "fx950_fp8_g32_q4_ps");
    expect(asmq("gfx950", "fp8", "fp8", 16, 5, 0), REJECT, 0, 0, "");
    expect(asmq("gfx950", "fp8", "fp8", 64, 1, 1), OK, 16, 4, "fx950_fp8_g16_q4_ps");
    expect(asmq("gfx950", "fp8", "fp8", 32, 1, 1, 1, 1), OK, 32, 1, "fx950_fp8_g32_q1_lse_ps");
    expect(asmq("gfx950", "fp8", "fp8", 32, 7, 1), OK, 32, 4, "fx950_fp8_g32_q4_ps");
    expect(asmq("gfx950", "fp8", "fp8", 32, 4, 1, 1, 0, 1), OK, 32, 4, "fx950_fp8_g32_q4_cprr_ps");
    expect(asmq("gfx950", "fp8", "fp8", 32, 4, 1, 1, 1, 1), NOK, 32, 4, "");
    expect(asmq("gfx950", "fp8", "fp8", 16, 4, 1, 0), OK, 16, 4, "fx950_fp8_g16_q4_msk0_ps");
    expect(asmq("gfx950", "fp8", "fp8", 32, 3, 1, 0), OK, 16, 4, "fx950_fp8_g16_q4_msk0_ps");
    expect(asmq("gfx950", "fp8", "fp8", 16, 1, 1, 0), OK, 16, 1, "fx950_fp8_g16_q1_ps");
    expect(asmq("gfx950", "fp8", "fp8", 8, 4, 1), OK, 8, 4, "fx950_fp8_g8_q4_ps");
    expect(asmq("gfx950", "fp8", "fp8", 128, 3, 0), OK, 128, 0, "fx950_fp8_g128_np");
    expect(asmq("gfx950", "fp8", "fp8", 64, 2, 0), REJECT, 0, 0, "");
    // bf16 persistent: >= 128 rows or > 64 heads (not 48) -> (32, 4); >= 64 rows or >= 16 heads -> (64, 1).
    expect(asmq("gfx950", "bf16", "bf16", 32, 4, 1), OK, 32, 4, "fx950_bf16_g32_q4_ps");
    expect(asmq("gfx950", "bf16", "bf16", 200, 1, 1), OK, 32, 4, "fx950_bf16_g32_q4_ps");
    expect(asmq("gfx950", "bf16", "bf16", 48, 3, 1), OK, 64, 1, "fx950_bf16_g64_q1_ps");
    expect(asmq("gfx950", "bf16", "bf16", 16, 1, 1, 1, 1), OK, 64, 1, "fx950_bf16_g64_q1_lse_ps");
    expect(asmq("gfx950", "bf16", "bf16", 8, 4, 1), NOK, 8, 4, "");
    expect(asmq("gfx950", "bf16", "bf16", 8, 8, 1), OK, 64, 1, "fx950_bf16_g64_q1_ps");
    // bf16 non-persistent gqa 64: qlen 1 -> 1, else 0 (any).
    expect(asmq("gfx950", "bf16", "bf16", 64, 3, 0), OK, 64, 0, "fx950_bf16_g64_np");
    expect(asmq("gfx950", "bf16", "bf16", 64, 1, 0), NOK, 64, 1, "");
    expect(asmq("gfx950", "bf16", "fp8", 16, 3, 1), OK, 16, 4, "fx950_bf16fp8_g16_q4_ps");
}

TEST_CASE("gfx1250 stage-1 asm: non-persistent page-64 variants only", "[routing][asm]") {
    rt_test::use_fixtures();
    expect(asmq("gfx1250", "fp8", "fp8", 8, 2, 0), OK, 8, 2, "fx1250_fp8_g8_q2_np");
    expect(asmq("gfx1250", "fp8", "fp8", 16, 4, 0, 1), OK, 16, 4, "fx1250_fp8_g16_q4_np");
    expect(asmq("gfx1250", "fp8", "fp8", 64, 1, 0), OK, 64, 1, "fx1250_fp8_g64_q1_np");
    expect(asmq("gfx1250", "fp8", "fp8", 32, 1, 0), NOK, 32, 1, "");  // listed, no fixture row
    expect(asmq("gfx1250", "fp8", "fp8", 16, 3, 0), REJECT, 0, 0, "");
    expect(asmq("gfx1250", "fp8", "fp8", 64, 2, 0), REJECT, 0, 0, "");
    expect(asmq("gfx1250", "fp8", "fp8", 64, 1, 1), NOK, 64, 1, "");
    expect(asmq("gfx1250", "fp8", "fp8", 64, 1, 0, 1, 1), NOK, 64, 1, "");
    expect(asmq("gfx1250", "fp8", "fp8", 64, 1, 0, 1, 0, 1), NOK, 64, 1, "");
    expect(asmq("gfx1250", "bf16", "bf16", 16, 4, 0), NOK, 16, 4, "");
}

TEST_CASE("sm_90a decode table keyed by the row tile", "[routing][asm][sm90]") {
    rt_test::use_fixtures();
    expect(asmq("sm_90a", "bf16", "bf16", 64, 1, 1), OK, 64, 0, "fx_sm90_bf16_m64");
    expect(asmq("sm_90a", "bf16", "bf16", 64, 3, 1, 0), OK, 64, 0, "fx_sm90_bf16_m64");
    expect(asmq("sm_90a", "bf16", "bf16", 64, 2, 1, 1, 1), OK, 64, 0, "fx_sm90_bf16_m64");
    expect(asmq("sm_90a", "bf16", "bf16", 16, 2, 1), OK, 32, 0, "fx_sm90_bf16_m32");
    expect(asmq("sm_90a", "bf16", "bf16", 16, 1, 1), OK, 16, 0, "fx_sm90_bf16_m16");
    expect(asmq("sm_90a", "bf16", "bf16", 8, 1, 1), OK, 16, 0, "fx_sm90_bf16_m16");
    expect(asmq("sm_90a", "bf16", "bf16", 48, 1, 1), OK, 64, 0, "fx_sm90_bf16_m64");
    expect(asmq("sm_90a", "bf16", "bf16", 16, 4, 1), OK, 64, 0, "fx_sm90_bf16_m64");
    expect(asmq("sm_90a", "bf16", "bf16", 16, 8, 1), OK, 64, 0, "fx_sm90_bf16_m64");
    expect(asmq("sm_90a", "bf16", "fp8", 64, 1, 1), OK, 64, 0, "fx_sm90_bf16fp8_m64");
    expect(asmq("sm_90a", "fp8", "fp8", 32, 1, 1, 1, 1), NOK, 32, 0, "");
    expect(asmq("sm_90a", "fp8", "fp8", 32, 1, 1), OK, 32, 0, "fx_sm90_fp8_m32");
    expect(asmq("sm_90a", "fp8_fnuz", "fp8_fnuz", 64, 1, 1), NOK, 64, 0, "");
    expect(asmq("sm_90a", "bf16", "bf16", 64, 1, 0), NOK, 64, 0, "");
    expect(asmq("sm_90a", "bf16", "bf16", 64, 2, 1, 1, 0, 1), NOK, 64, 0, "");
    expect(asmq("sm_90a", "bf16", "bf16", 128, 1, 1), REJECT, 0, 0, "");
    CHECK(mla::route::sm90_row_tile(64, 4) == 64);
    CHECK(mla::route::sm90_row_tile(20, 4) == 64);  // 3 tokens x 20 heads = 60 rows
    CHECK(mla::route::sm90_row_tile(20, 1) == 32);
    CHECK(mla::route::sm90_row_tile(65, 1) == -1);
}

TEST_CASE("PS1 FP8 code objects (mla_dsl)", "[routing][asm][ps1]") {
    rt_test::use_fixtures();
    char buf[64];
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 4, 1, 1, 0, buf, sizeof(buf), nullptr) == OK);
    CHECK(std::string(buf) == "fx1250_ps1_g96_lse");
    // the exact qSeqLen row wins over qSeqLen 0 (any)
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 2, 1, 1, 0, buf, sizeof(buf), nullptr) == OK);
    CHECK(std::string(buf) == "fx1250_ps1_g96_q2_lse");
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 1, 0, 0, 0, buf, sizeof(buf), nullptr) == OK);
    CHECK(std::string(buf) == "fx1250_ps1_g96_msk0");
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 3, 1, 0, 1, buf, sizeof(buf), nullptr) == OK);
    CHECK(std::string(buf) == "fx1250_ps1_g96_cprr");
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 128, 1, 1, 0, 0, buf, sizeof(buf), nullptr) == OK);
    CHECK(std::string(buf) == "fx1250_ps1_g128");
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 128, 1, 1, 1, 0, buf, sizeof(buf), nullptr) == NOK);
    CHECK(std::string(buf).empty());
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 64, 1, 1, 0, 0, buf, sizeof(buf), nullptr) == NOK);
    CHECK(mla_ps1_fp8_asm_query("gfx950", 96, 1, 1, 0, 0, buf, sizeof(buf), nullptr) == NOTBUILT);
    const auto v = mla::route::ps1_fp8_asm_query(mla::route::Arch::gfx1250, 96, 2, true, true, false);
    CHECK(v.table_qseqlen == 2);
    CHECK(v.row->get_int("dyn_lds") == 2048);
}

TEST_CASE("ARCH_NOT_BUILT without tables; the remap still answers", "[routing][asm]") {
    char tmpl[] = "/tmp/mla_route_empty_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    REQUIRE(mla_set_codeobject_root(tmpl) == MLA_SUCCESS);
    for (const char* arch : {"gfx942", "gfx950", "sm_90a"})
        CHECK(asmq(arch, "bf16", "bf16", 16, 1, 1).status == NOTBUILT);
    // gfx1250's remap refuses persistent launches before it needs a table
    CHECK(asmq("gfx1250", "fp8", "fp8", 8, 2, 0).status == NOTBUILT);
    CHECK(asmq("gfx1250", "fp8", "fp8", 8, 2, 1).status == NOK);
    expect(asmq("gfx950", "fp8", "fp8", 64, 2, 1), NOTBUILT, 32, 4, "");
    expect(asmq("gfx950", "fp8", "fp8", 64, 2, 0), REJECT, 0, 0, "");
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 1, 1, 0, 0, nullptr, 0, nullptr) == NOTBUILT);
    // the shape query says why
    mla_decode_shape s = rt_test::shape("gfx950", 64, 2);
    const mla_decode_support v = rt_test::support_of(s);
    CHECK(v.asm_status == MLA_ASM_ARCH_NOT_BUILT);
    CHECK(v.supported == 0);
    CHECK(std::string(v.reasons) ==
          "asm ARCH_NOT_BUILT on gfx950: q=fp8 kv=fp8 heads=64 qlen=2 (table gqa=32 qseqlen=4) "
          "persistent=True causal=True lse=False cprr=False: no mla_asm.csv for gfx950 under the "
          "code-object root\n");
    rmdir(tmpl);
    rt_test::use_fixtures();
}

TEST_CASE("packed return value and kernel_buf rules", "[routing][asm][abi]") {
    rt_test::use_fixtures();
    // 32 heads qlen 2 +lse on gfx950 -> OK | 16 << 8 | 4 << 16
    CHECK(mla_decode_asm_query("gfx950", "fp8", "fp8", 32, 1, 2, 1, 1, 1, 0, nullptr, 0, nullptr) ==
          (0 | 16 << 8 | 4 << 16));
    CHECK(mla_decode_asm_query("gfx950", "fp8", "fp8", 16, 1, 2, 1, 1, 1, 0, nullptr, 0, nullptr) ==
          (2 | 16 << 8 | 2 << 16));
    CHECK(mla_decode_asm_query("gfx950", "fp8", "fp8", 64, 1, 1, 0, 1, 0, 0, nullptr, 0, nullptr) == 1);
    // values beyond 8 bits saturate at 255 (only a NO_KERNEL can carry them)
    CHECK(mla_decode_asm_query("gfx942", "bf16", "bf16", 300, 1, 1, 1, 1, 0, 0, nullptr, 0, nullptr) ==
          (2 | 255 << 8 | 1 << 16));
    // name "fx950_fp8_g16_q4_lse_ps" is 23 chars: needs 24 bytes
    const std::string name = "fx950_fp8_g16_q4_lse_ps";
    char buf[40];
    std::memset(buf, '#', sizeof(buf));
    int r = mla_decode_asm_query("gfx950", "fp8", "fp8", 32, 1, 2, 1, 1, 1, 0, buf, 23, nullptr);
    CHECK(r == -MLA_ERROR_BUFFER_TOO_SMALL);
    const std::string msg = mla_last_error();
    CHECK(msg.find("needs 24") != std::string::npos);
    for (char c : buf) CHECK(c == '#');  // untouched
    r = mla_decode_asm_query("gfx950", "fp8", "fp8", 32, 1, 2, 1, 1, 1, 0, buf, 24, nullptr);
    CHECK(r == (16 << 8 | 4 << 16));
    CHECK(std::string(buf) == name);
    for (int i = 24; i < 40; ++i) CHECK(buf[i] == '#');  // nothing past kernel_buf_len
    // no row: "" fits in one byte
    std::memset(buf, '#', sizeof(buf));
    r = mla_decode_asm_query("gfx950", "fp8", "fp8", 16, 1, 2, 1, 1, 1, 0, buf, 1, nullptr);
    CHECK(r == (2 | 16 << 8 | 2 << 16));
    CHECK(buf[0] == '\0');
    CHECK(buf[1] == '#');
    // PS1 query, same rules
    std::memset(buf, '#', sizeof(buf));
    CHECK(mla_ps1_fp8_asm_query("gfx1250", 96, 4, 1, 1, 0, buf, 5, nullptr) == -MLA_ERROR_BUFFER_TOO_SMALL);
    CHECK(std::string(mla_last_error()).find("needs 19") != std::string::npos);
    for (char c : buf) CHECK(c == '#');
}
