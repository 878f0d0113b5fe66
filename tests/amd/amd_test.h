// amd_test.h - helpers of the amd suite: contexts on the fake HIP runtime over the fixture root
// (tests/fixtures/amd_launch), expected argument blocks built field by field at the documented
// offsets (aiter-mla-semantics.md §5.2, docs/amd.md), and the check of one recorded launch.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fake_runtime.h"
#include "mla_c_api.h"

namespace amdt {

inline std::string fixture_root() {
    const char* f = std::getenv("MLA_TEST_FIXTURES");
    REQUIRE(f != nullptr);
    return std::string(f) + "/amd_launch";
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A made-up device address (never dereferenced: no kernel emulation is registered).
inline void* dev(uintptr_t a) { return reinterpret_cast<void*>(a); }

struct Fixture {
    Fixture() {
        fake_rt_install_env();
        fake_rt_reset();
        mla_set_codeobject_root(nullptr);
    }
};

inline mla_context* create(const char* arch, const char* device, int cus,
                           const std::string& root = fixture_root()) {
    fake_rt_set_device(device, cus);
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.arch = arch;
    o.codeobject_root = root.c_str();
    mla_context* ctx = nullptr;
    const mla_status st = mla_context_create(&o, &ctx);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
    return ctx;
}

// Expected argument bytes, written field by field at their offsets (little-endian).
class Block {
public:
    explicit Block(size_t n) : b_(n, 0) {}
    void ptr(size_t off, const void* p) { put(off, reinterpret_cast<uintptr_t>(p), 8); }
    void u32(size_t off, uint32_t v) { put(off, v, 4); }
    void i32(size_t off, int32_t v) { put(off, uint32_t(v), 4); }
    void f32(size_t off, float f) {
        uint32_t v;
        std::memcpy(&v, &f, 4);
        put(off, v, 4);
    }
    const std::vector<unsigned char>& bytes() const { return b_; }

private:
    void put(size_t off, uint64_t v, int n) {
        REQUIRE(off + n <= b_.size());
        for (int i = 0; i < n; ++i) b_[off + i] = static_cast<unsigned char>(v >> (8 * i));
    }
    std::vector<unsigned char> b_;
};

struct Expect {
    std::string co_file;  // path relative to the fixture root
    std::string symbol;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared;
    void* stream;
};

// Checks launch `i`: the image of its module is the fixture file, the symbol, grid, block,
// dynamic shared memory, stream, packed form and every argument byte.
inline void check_launch(int i, const Expect& e, const Block& args) {
    const fake_rt_launch_record* l = fake_rt_launch(i);
    REQUIRE(l != nullptr);
    CHECK(l->api == FAKE_RT_HIP);
    CHECK(std::string(l->symbol) == e.symbol);
    size_t size = 0;
    const unsigned char* image = fake_rt_module_image(l->module_index, &size);
    REQUIRE(image != nullptr);
    const std::string file = read_file(fixture_root() + "/" + e.co_file);
    REQUIRE(!file.empty());
    REQUIRE(size == file.size());
    CHECK(std::memcmp(image, file.data(), size) == 0);
    CHECK(fake_rt_module_api(l->module_index) == FAKE_RT_HIP);
    for (int d = 0; d < 3; ++d) {
        INFO("dim " << d);
        CHECK(l->grid[d] == e.grid[d]);
        CHECK(l->block[d] == e.block[d]);
    }
    CHECK(l->shared == e.shared);
    CHECK(l->stream == e.stream);
    CHECK(l->packed == 1);
    const std::vector<unsigned char>& want = args.bytes();
    REQUIRE(l->args_bytes == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        INFO("argument byte 0x" << std::hex << k);
        CHECK(int(l->args[k]) == int(want[k]));
    }
}

// Launches and requires success (message on failure).
inline void launch_ok(mla_context* ctx, const mla_amd_stage1_args& a, void* stream) {
    const mla_status st = mla_amd_decode_stage1(ctx, &a, stream);
    INFO(mla_last_error());
    REQUIRE(st == MLA_SUCCESS);
}

// The 368-byte gfx942/gfx950 block with every field at its §5.2 offset.
struct Gfx9Fields {
    const void *r, *lse, *q, *kv, *ltp, *ltd, *ltl;
    float scale;
    uint32_t mqa, kv_split, q_bytes, page_bytes, log2_page;
    const void *qtp, *stp, *rp, *q_scale, *kv_scale;
    uint32_t out16;
    const void *lsep, *gkvtp;
    uint32_t cp_world, cp_rank;
};
// The fields every gfx9 stage-1 launch passes straight from the call's args (buffers, page
// table, qo_indptr, softmax scale); a test sets the rest (row counts, byte sizes, work/split
// tables, scales, CP) for its case.
inline Gfx9Fields gfx9_fields_of(const mla_amd_stage1_args& a) {
    Gfx9Fields f{};
    f.r = a.split_data;
    f.lse = a.split_lse;
    f.q = a.q;
    f.kv = a.kv_cache;
    f.ltp = a.kv_indptr;
    f.ltd = a.kv_page_indices;
    f.ltl = a.kv_last_page_lens;
    f.scale = a.softmax_scale;
    f.qtp = a.qo_indptr;
    return f;
}
inline Block gfx9_block(const Gfx9Fields& f) {
    Block b(368);
    b.ptr(0x00, f.r);
    b.ptr(0x10, f.lse);
    b.ptr(0x20, f.q);
    b.ptr(0x30, f.kv);
    b.ptr(0x40, f.ltp);
    b.ptr(0x50, f.ltd);
    b.ptr(0x60, f.ltl);
    b.f32(0x70, f.scale);
    b.u32(0x80, f.mqa);
    b.u32(0x90, f.kv_split);
    b.u32(0xA0, f.q_bytes);
    b.u32(0xB0, f.page_bytes);
    b.u32(0xC0, f.log2_page);
    b.ptr(0xD0, f.qtp);
    b.ptr(0xE0, f.stp);
    b.ptr(0xF0, f.rp);
    b.ptr(0x100, f.q_scale);
    b.ptr(0x110, f.kv_scale);
    b.u32(0x120, f.out16);
    b.ptr(0x130, f.lsep);
    b.ptr(0x140, f.gkvtp);
    b.u32(0x150, f.cp_world);
    b.u32(0x160, f.cp_rank);
    return b;
}

// A request with every pointer set to a distinct address; the tests override what they vary.
inline mla_amd_stage1_args base_args() {
    mla_amd_stage1_args a = MLA_AMD_STAGE1_ARGS_INIT;
    a.batch_size = 3;
    a.softmax_scale = 0.1352337f;
    a.q = dev(0x10000000);
    a.kv_cache = dev(0x20000000);
    a.qo_indptr = static_cast<const int32_t*>(dev(0x30000000));
    a.kv_indptr = static_cast<const int32_t*>(dev(0x30001000));
    a.kv_page_indices = static_cast<const int32_t*>(dev(0x30002000));
    a.kv_last_page_lens = static_cast<const int32_t*>(dev(0x30003000));
    a.num_pages = 4096;
    a.num_page_indices = 1000;
    a.split_data = dev(0x40000000);
    a.split_lse = static_cast<float*>(dev(0x50000000));
    a.output = dev(0x60000000);
    return a;
}

}  // namespace amdt
