// test_context.cpp - contexts on the fake CUDA driver and fake HIP runtime: the registry ->
// code object -> module -> launch path, byte for byte, the device helpers and error mapping.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "../../codeobjects/sm_90a/smoke/smoke_params.h"
#include "fake_runtime.h"
#include "mla_c_api.h"
#include "test_util.h"

using test::contains;
using test::TempDir;

namespace {

// Host emulation of mla_smoke_fill: out[i] = a * i + b for the launched threads with i < n.
void smoke_emulation(const fake_rt_launch_record* l, void*) {
    mla_smoke_params p;
    std::memcpy(&p, l->args, sizeof p);
    const long threads = long(l->grid[0]) * l->block[0];
    for (long i = 0; i < threads; ++i)
        if (i < p.n) p.out[i] = p.a * int32_t(i) + p.b;
}

std::string fake_image(const std::string& payload) {
    std::vector<unsigned char> buf(payload.size() + FAKE_RT_IMAGE_HEADER);
    size_t n = fake_rt_format_image(payload.data(), payload.size(), buf.data(), buf.size());
    return std::string(reinterpret_cast<char*>(buf.data()), n);
}

struct Fixture {
    Fixture() {
        fake_rt_install_env();
        fake_rt_reset();
        mla_set_codeobject_root(nullptr);
    }
};

mla_context* create(const char* arch, const std::string& root, mla_status expect = MLA_SUCCESS) {
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.arch = arch;
    o.codeobject_root = root.empty() ? nullptr : root.c_str();
    mla_context* ctx = nullptr;
    const mla_status st = mla_context_create(&o, &ctx);
    INFO(mla_last_error());
    REQUIRE(st == expect);
    return ctx;
}

// Checks launch i is a smoke launch with exactly these arguments.
void check_smoke_record(int i, int api, const char* symbol, int32_t* out, int32_t n, int32_t a,
                        int32_t b, unsigned threads, void* stream) {
    const fake_rt_launch_record* l = fake_rt_launch(i);
    REQUIRE(l != nullptr);
    CHECK(l->api == api);
    CHECK(std::string(l->symbol) == symbol);
    CHECK(l->grid[0] == (unsigned(n) + threads - 1) / threads);
    CHECK(l->grid[1] == 1);
    CHECK(l->grid[2] == 1);
    CHECK(l->block[0] == threads);
    CHECK(l->block[1] == 1);
    CHECK(l->block[2] == 1);
    CHECK(l->shared == 0);
    CHECK(l->stream == stream);
    CHECK(l->packed == 1);
    REQUIRE(l->args_bytes == sizeof(mla_smoke_params));
    CHECK(sizeof(mla_smoke_params) == 24);
    mla_smoke_params expect;
    std::memset(&expect, 0, sizeof expect);
    expect.out = out;
    expect.n = n;
    expect.a = a;
    expect.b = b;
    CHECK(std::memcmp(l->args, &expect, sizeof expect) == 0);
}

}  // namespace

TEST_CASE_METHOD(Fixture, "sm_90a smoke through the build tree's table on the fake CUDA driver",
                 "[core][context][cuda]") {
    fake_rt_set_device("9.0", 132);
    fake_rt_set_kernel("mla_smoke_fill", smoke_emulation, nullptr);
    const std::string root = test::build_codeobjects();
    REQUIRE(!root.empty());
    mla_context* ctx = create(nullptr, root);  // arch from the device: 9.0 -> sm_90a
    CHECK(std::string(mla_context_arch(ctx)) == "sm_90a");
    CHECK(mla_context_num_cus(ctx) == 132);
    CHECK(fake_rt_last_proc_version() == 12000);  // entry points resolved at the pinned version
    CHECK(fake_rt_last_proc_flags() == 0);

    const int32_t n = 1000;
    void* dev = nullptr;
    REQUIRE(mla_device_malloc(ctx, &dev, n * sizeof(int32_t)) == MLA_SUCCESS);
    int32_t* out = static_cast<int32_t*>(dev);
    void* stream = reinterpret_cast<void*>(0x1234);

    const std::string cubin = root + "/sm_90a/smoke/smoke.cubin";
    if (std::filesystem::exists(cubin)) {
        REQUIRE(mla_smoke_launch(ctx, out, n, 3, -7, stream) == MLA_SUCCESS);
        REQUIRE(fake_rt_module_count() == 1);
        size_t size = 0;
        const unsigned char* image = fake_rt_module_image(0, &size);
        const std::string file = test::read_file(cubin);
        REQUIRE(size == file.size());
        CHECK(std::memcmp(image, file.data(), size) == 0);
        CHECK(fake_rt_module_api(0) == FAKE_RT_CUDA);
        REQUIRE(fake_rt_function_count() == 1);
        CHECK(std::string(fake_rt_function_name(0)) == "mla_smoke_fill");
        REQUIRE(fake_rt_launch_count() == 1);
        check_smoke_record(0, FAKE_RT_CUDA, "mla_smoke_fill", out, n, 3, -7, 128, stream);

        std::vector<int32_t> host(n, 0);
        REQUIRE(mla_memcpy_dtoh(ctx, host.data(), out, n * sizeof(int32_t), stream) == MLA_SUCCESS);
        REQUIRE(mla_stream_synchronize(ctx, stream) == MLA_SUCCESS);
        for (int i = 0; i < n; ++i) REQUIRE(host[i] == 3 * i - 7);

        // Second launch: module and function come from the cache.
        REQUIRE(mla_smoke_launch(ctx, out, 129, 1, 0, nullptr) == MLA_SUCCESS);
        CHECK(fake_rt_module_count() == 1);
        CHECK(fake_rt_function_count() == 1);
        check_smoke_record(1, FAKE_RT_CUDA, "mla_smoke_fill", out, 129, 1, 0, 128, nullptr);
        CHECK(fake_rt_launch(1)->grid[0] == 2);
        // n == 0 launches nothing.
        REQUIRE(mla_smoke_launch(ctx, out, 0, 1, 0, nullptr) == MLA_SUCCESS);
        CHECK(fake_rt_launch_count() == 2);
    } else {
        // Built without nvcc: the row is there, its cubin is not.
        CHECK(mla_smoke_launch(ctx, out, n, 3, -7, stream) == MLA_ERROR_CODE_OBJECT);
        CHECK(contains(mla_last_error(), "code object file missing: " + cubin));
        CHECK(fake_rt_launch_count() == 0);
    }
    REQUIRE(mla_device_free(ctx, dev) == MLA_SUCCESS);
    mla_context_destroy(ctx);
    if (fake_rt_module_count() == 1) CHECK(fake_rt_module_unloaded(0) == 1);
}

TEST_CASE_METHOD(Fixture, "fixture smoke table on the fake CUDA driver", "[core][context][cuda]") {
    TempDir root;
    const std::string image = fake_image("smoke image bytes");
    root.write("sm_90a/smoke/smoke.csv",
               "# fixture\nkind,launch_threads,knl_name,co_name\nsmoke,64,mla_smoke_fill,s.cubin\n");
    root.write("sm_90a/smoke/s.cubin", image);
    fake_rt_set_device("9.0", 114);
    fake_rt_set_kernel("mla_smoke_fill", smoke_emulation, nullptr);
    mla_context* ctx = create("sm_90a", root.path());
    CHECK(mla_context_num_cus(ctx) == 114);

    void* dev = nullptr;
    REQUIRE(mla_device_malloc(ctx, &dev, 100 * sizeof(int32_t)) == MLA_SUCCESS);
    REQUIRE(mla_memset_d8(ctx, dev, 0xff, 100 * sizeof(int32_t), nullptr) == MLA_SUCCESS);
    REQUIRE(mla_smoke_launch(ctx, static_cast<int32_t*>(dev), 65, -2, 5, nullptr) == MLA_SUCCESS);
    size_t size = 0;
    const unsigned char* loaded = fake_rt_module_image(0, &size);
    REQUIRE(size == image.size());
    CHECK(std::memcmp(loaded, image.data(), size) == 0);
    check_smoke_record(0, FAKE_RT_CUDA, "mla_smoke_fill", static_cast<int32_t*>(dev), 65, -2, 5, 64,
                       nullptr);
    std::vector<int32_t> host(100);
    REQUIRE(mla_memcpy_dtoh(ctx, host.data(), dev, host.size() * 4, nullptr) == MLA_SUCCESS);
    for (int i = 0; i < 65; ++i) REQUIRE(host[i] == -2 * i + 5);
    for (int i = 65; i < 100; ++i) REQUIRE(host[i] == -1);  // untouched (0xff bytes)

    // htod round trip
    std::vector<int32_t> src(100);
    for (int i = 0; i < 100; ++i) src[i] = i * i;
    REQUIRE(mla_memcpy_htod(ctx, dev, src.data(), 400, nullptr) == MLA_SUCCESS);
    REQUIRE(mla_memcpy_dtoh(ctx, host.data(), dev, 400, nullptr) == MLA_SUCCESS);
    CHECK(host == src);

    // Timer: two events, recorded and destroyed.
    mla_timer* t = nullptr;
    REQUIRE(mla_timer_start(ctx, nullptr, &t) == MLA_SUCCESS);
    float ms = -1.f;
    REQUIRE(mla_timer_stop_ms(ctx, t, &ms) == MLA_SUCCESS);
    CHECK(ms >= 0.f);
    CHECK(fake_rt_call_count("cuEventCreate") == 2);
    CHECK(fake_rt_call_count("cuEventRecord") == 2);
    CHECK(fake_rt_call_count("cuEventDestroy") == 2);

    const int live = fake_rt_live_allocations();
    REQUIRE(mla_device_free(ctx, dev) == MLA_SUCCESS);
    CHECK(fake_rt_live_allocations() == live - 1);
    CHECK(mla_device_free(ctx, nullptr) == MLA_SUCCESS);
    mla_context_destroy(ctx);
    CHECK(fake_rt_module_unloaded(0) == 1);
}

TEST_CASE_METHOD(Fixture, "a fork() child is refused by the runtime, the parent goes on", "[core][context][cuda]") {
    // The runtimes compare pids only after a pthread_atfork child handler has run (no getpid()
    // system call per launch, src/runtime/fork_guard.h); the child must still be refused.
    TempDir root;
    root.write("sm_90a/smoke/smoke.csv", "kind,launch_threads,knl_name,co_name\nsmoke,64,mla_smoke_fill,s.cubin\n");
    root.write("sm_90a/smoke/s.cubin", fake_image("smoke image bytes"));
    fake_rt_set_kernel("mla_smoke_fill", smoke_emulation, nullptr);
    mla_context* ctx = create("sm_90a", root.path());
    void* dev = nullptr;
    REQUIRE(mla_device_malloc(ctx, &dev, 64 * sizeof(int32_t)) == MLA_SUCCESS);
    const int launches_before = fake_rt_launch_count();
    REQUIRE(mla_smoke_launch(ctx, static_cast<int32_t*>(dev), 64, 1, 0, nullptr) == MLA_SUCCESS);
    CHECK(fake_rt_launch_count() == launches_before + 1);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // exit status: 0 when both calls are refused with RUNTIME_UNAVAILABLE naming fork()
        const int launches = fake_rt_launch_count();
        const mla_status a = mla_smoke_launch(ctx, static_cast<int32_t*>(dev), 64, 1, 0, nullptr);
        const bool a_ok = a == MLA_ERROR_RUNTIME_UNAVAILABLE && std::strstr(mla_last_error(), "fork()") != nullptr;
        const mla_status b = mla_memset_d8(ctx, dev, 0, 64, nullptr);
        const bool b_ok = b == MLA_ERROR_RUNTIME_UNAVAILABLE;
        _exit(a_ok && b_ok && fake_rt_launch_count() == launches ? 0 : 1);
    }
    int status = -1;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // the parent is not a child: its calls go on
    REQUIRE(mla_smoke_launch(ctx, static_cast<int32_t*>(dev), 64, 2, 0, nullptr) == MLA_SUCCESS);
    std::vector<int32_t> host(64);
    REQUIRE(mla_memcpy_dtoh(ctx, host.data(), dev, host.size() * 4, nullptr) == MLA_SUCCESS);
    CHECK(host[5] == 10);
    REQUIRE(mla_device_free(ctx, dev) == MLA_SUCCESS);
    mla_context_destroy(ctx);
}

TEST_CASE_METHOD(Fixture, "gfx942 smoke through the fake HIP runtime", "[core][context][hip]") {
    TempDir root;
    const std::string image = fake_image("gfx942 hsaco");
    root.write("gfx942/smoke/smoke.csv",
               "kind,launch_threads,knl_name,co_name\nsmoke,256,_ZN3mla10smoke_fillE,smoke.co\n");
    root.write("gfx942/smoke.co", image);  // aiter layout: <root>/<arch>/<co_name>
    fake_rt_set_device("gfx942:sramecc+:xnack-", 304);
    mla_context* ctx = create("gfx942", root.path());
    CHECK(std::string(mla_context_arch(ctx)) == "gfx942");
    CHECK(mla_context_num_cus(ctx) == 304);

    void* dev = nullptr;
    REQUIRE(mla_device_malloc(ctx, &dev, 4000) == MLA_SUCCESS);
    CHECK(fake_rt_call_count("hipMalloc") == 1);
    void* stream = reinterpret_cast<void*>(0xabc);
    REQUIRE(mla_smoke_launch(ctx, static_cast<int32_t*>(dev), 1000, 7, 1, stream) == MLA_SUCCESS);
    REQUIRE(fake_rt_module_count() == 1);
    CHECK(fake_rt_module_api(0) == FAKE_RT_HIP);
    size_t size = 0;
    const unsigned char* loaded = fake_rt_module_image(0, &size);
    REQUIRE(size == image.size());
    CHECK(std::memcmp(loaded, image.data(), size) == 0);
    check_smoke_record(0, FAKE_RT_HIP, "_ZN3mla10smoke_fillE", static_cast<int32_t*>(dev), 1000, 7,
                       1, 256, stream);
    CHECK(fake_rt_call_count("cuLaunchKernel") == 0);
    REQUIRE(mla_device_free(ctx, dev) == MLA_SUCCESS);
    mla_context_destroy(ctx);
    CHECK(fake_rt_module_unloaded(0) == 1);
}

TEST_CASE_METHOD(Fixture, "context creation errors", "[core][context][errors]") {
    TempDir root;
    root.write("sm_90a/smoke/smoke.csv",
               "kind,launch_threads,knl_name,co_name\nsmoke,128,mla_smoke_fill,s.cubin\n");
    mla_context* ctx = reinterpret_cast<mla_context*>(0x1);
    mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
    o.codeobject_root = root.path().c_str();

    CHECK(mla_context_create(&o, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    mla_context_options bad = o;
    bad.struct_size = 0;
    CHECK(mla_context_create(&bad, &ctx) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(contains(mla_last_error(), "struct_size is 0"));
    bad = o;
    bad.device = -1;
    CHECK(mla_context_create(&bad, &ctx) == MLA_ERROR_INVALID_ARGUMENT);
    bad = o;
    bad.arch = "sm_80";
    CHECK(mla_context_create(&bad, &ctx) == MLA_ERROR_ARCH_NOT_BUILT);
    CHECK(contains(mla_last_error(), "unknown arch 'sm_80'"));
    bad = o;
    bad.codeobject_root = "/nonexistent/root";
    CHECK(mla_context_create(&bad, &ctx) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) ==
          "mla_context_create: codeobject_root '/nonexistent/root' is not a folder");
    CHECK(ctx == reinterpret_cast<mla_context*>(0x1));  // never written on failure

    SECTION("no device at the ordinal") {
        bad = o;
        bad.device = 1;
        CHECK(mla_context_create(&bad, &ctx) == MLA_ERROR_NO_DEVICE);
        CHECK(contains(mla_last_error(), "reports 1 device(s)"));
        fake_rt_set_device_count(0);
        CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_NO_DEVICE);
    }
    SECTION("device arch without kernels") {
        fake_rt_set_device("8.0", 108);
        CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_ARCH_NOT_BUILT);
        CHECK(contains(mla_last_error(), "device 0 is sm_80: libmla has no kernels for it"));
    }
    SECTION("root without tables for the arch") {
        fake_rt_set_device("gfx950", 256);
        bad = o;
        bad.arch = "gfx950";
        CHECK(mla_context_create(&bad, &ctx) == MLA_ERROR_ARCH_NOT_BUILT);
        CHECK(std::string(mla_last_error()) ==
              "no code-object tables for gfx950 under " + root.path() + "/gfx950");
    }
    SECTION("explicit arch other than the device's: allowed on the fake runtime") {
        fake_rt_set_device("gfx942", 304);  // the CUDA side of the fake reports 0.0
        bad = o;
        bad.arch = "sm_90a";
        mla_context* c = nullptr;
        REQUIRE(mla_context_create(&bad, &c) == MLA_SUCCESS);
        CHECK(std::string(mla_context_arch(c)) == "sm_90a");
        mla_context_destroy(c);
    }
    SECTION("runtime failures map to statuses") {
        fake_rt_fail("cuDeviceGetCount", 999);
        CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_LAUNCH);
        CHECK(std::string(mla_last_error()) ==
              "cuDeviceGetCount failed: CUDA_ERROR_UNKNOWN (fake runtime error) [999]");
        fake_rt_fail("cuDeviceGetCount", 0);
        fake_rt_fail("cuDeviceGetAttribute", 101);
        CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_NO_DEVICE);
    }
    CHECK(ctx == reinterpret_cast<mla_context*>(0x1));
}

TEST_CASE_METHOD(Fixture, "launch-path errors name what failed", "[core][context][errors]") {
    TempDir root;
    root.write("sm_90a/smoke/smoke.csv",
               "kind,launch_threads,knl_name,co_name\nsmoke,128,mla_smoke_fill,s.cubin\n");
    const std::string co = root.write("sm_90a/smoke/s.cubin", fake_image("ok"));
    int32_t* out = reinterpret_cast<int32_t*>(0x1000);  // never dereferenced: no emulation

    SECTION("missing code object file") {
        std::filesystem::remove(co);
        mla_context* ctx = create("sm_90a", root.path());  // queries/creation do not need it
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_CODE_OBJECT);
        CHECK(std::string(mla_last_error()) ==
              "code object file missing: " + co + " (kernel mla_smoke_fill, table " + root.path() +
                  "/sm_90a/smoke/smoke.csv:2)");
        CHECK(fake_rt_launch_count() == 0);
        CHECK(fake_rt_module_count() == 0);
        mla_context_destroy(ctx);
    }
    SECTION("image the runtime rejects") {
        root.write("sm_90a/smoke/s.cubin", "not an image");
        mla_context* ctx = create("sm_90a", root.path());
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_CODE_OBJECT);
        CHECK(contains(mla_last_error(), "loading code object " + co));
        CHECK(contains(mla_last_error(), "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE"));
        CHECK(fake_rt_launch_count() == 0);
        mla_context_destroy(ctx);
    }
    SECTION("kernel symbol not in the module") {
        fake_rt_fail("cuModuleGetFunction", 500);
        mla_context* ctx = create("sm_90a", root.path());
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_CODE_OBJECT);
        CHECK(contains(mla_last_error(), "kernel symbol 'mla_smoke_fill' not found in the code "
                                         "object: CUDA_ERROR_NOT_FOUND"));
        CHECK(contains(mla_last_error(), co));
        mla_context_destroy(ctx);
    }
    SECTION("launch refused") {
        fake_rt_fail("cuLaunchKernel", 719);
        mla_context* ctx = create("sm_90a", root.path());
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_LAUNCH);
        CHECK(std::string(mla_last_error()) ==
              "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (fake runtime error) [719]");
        fake_rt_fail("cuMemAlloc", 2);
        void* p = reinterpret_cast<void*>(0x5);
        CHECK(mla_device_malloc(ctx, &p, 16) == MLA_ERROR_LAUNCH);
        CHECK(p == reinterpret_cast<void*>(0x5));
        fake_rt_fail("cuMemcpyHtoDAsync", 1);
        CHECK(mla_memcpy_htod(ctx, out, &p, 8, nullptr) == MLA_ERROR_LAUNCH);
        CHECK(contains(mla_last_error(), "cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_VALUE"));
        mla_context_destroy(ctx);
    }
    SECTION("no smoke row / no smoke table / bad launch_threads") {
        root.write("sm_90a/smoke/smoke.csv",
                   "kind,launch_threads,knl_name,co_name\nother,128,mla_smoke_fill,s.cubin\n");
        mla_context* ctx = create("sm_90a", root.path());
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_NO_KERNEL);
        CHECK(std::string(mla_last_error()) ==
              "no row of " + root.path() + "/sm_90a/smoke/smoke.csv matches kind=smoke");
        mla_context_destroy(ctx);

        TempDir root2;
        root2.write("sm_90a/x/other.csv", "kind,knl_name,co_name\nsmoke,k,k.co\n");
        ctx = create("sm_90a", root2.path());
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_NO_KERNEL);
        CHECK(std::string(mla_last_error()) ==
              "no table 'smoke' for sm_90a under " + root2.path() + "/sm_90a");
        mla_context_destroy(ctx);

        TempDir root3;
        root3.write("sm_90a/smoke.csv", "kind,launch_threads,knl_name,co_name\nsmoke,0,k,k.co\n");
        ctx = create("sm_90a", root3.path());
        CHECK(mla_smoke_launch(ctx, out, 10, 1, 1, nullptr) == MLA_ERROR_TABLE);
        CHECK(std::string(mla_last_error()) == root3.path() + "/sm_90a/smoke.csv:2: launch_threads "
                                                              "must be in 1..1024, got 0");
        mla_context_destroy(ctx);
    }
    SECTION("a malformed table fails context creation with TABLE") {
        root.write("sm_90a/smoke/smoke.csv", "kind,knl_name\nsmoke,k\n");
        mla_context* ctx = nullptr;
        mla_context_options o = MLA_CONTEXT_OPTIONS_INIT;
        o.codeobject_root = root.path().c_str();
        CHECK(mla_context_create(&o, &ctx) == MLA_ERROR_TABLE);
        CHECK(contains(mla_last_error(), "missing column 'co_name'"));
        CHECK(ctx == nullptr);
    }
}

TEST_CASE_METHOD(Fixture, "null pointers and bad arguments to every context function",
                 "[core][context][null]") {
    TempDir root;
    root.write("sm_90a/smoke/smoke.csv",
               "kind,launch_threads,knl_name,co_name\nsmoke,128,mla_smoke_fill,s.cubin\n");
    int32_t buf[4] = {0, 0, 0, 0};
    mla_timer* t = nullptr;
    float ms = 0;
    void* p = nullptr;

    CHECK(mla_context_arch(nullptr) == nullptr);
    CHECK(mla_context_num_cus(nullptr) == 0);
    mla_context_destroy(nullptr);
    CHECK(mla_smoke_launch(nullptr, buf, 4, 1, 1, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) == "context is NULL");
    CHECK(mla_device_malloc(nullptr, &p, 4) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_device_free(nullptr, buf) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_htod(nullptr, buf, buf, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_dtoh(nullptr, buf, buf, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memset_d8(nullptr, buf, 0, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_stream_synchronize(nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_timer_start(nullptr, nullptr, &t) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_timer_stop_ms(nullptr, t, &ms) == MLA_ERROR_INVALID_ARGUMENT);

    mla_context* ctx = create("sm_90a", root.path());
    CHECK(mla_smoke_launch(ctx, nullptr, 4, 1, 1, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_smoke_launch(ctx, buf, -1, 1, 1, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(mla_last_error()) == "mla_smoke_launch: n = -1 < 0");
    CHECK(mla_device_malloc(ctx, nullptr, 4) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_device_malloc(ctx, &p, 0) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_htod(ctx, nullptr, buf, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_htod(ctx, buf, nullptr, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_dtoh(ctx, nullptr, buf, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_dtoh(ctx, buf, nullptr, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memset_d8(ctx, nullptr, 0, 4, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_memcpy_htod(ctx, nullptr, nullptr, 0, nullptr) == MLA_SUCCESS);  // 0 bytes: no-op
    CHECK(mla_timer_start(ctx, nullptr, nullptr) == MLA_ERROR_INVALID_ARGUMENT);
    CHECK(mla_timer_stop_ms(ctx, nullptr, &ms) == MLA_ERROR_INVALID_ARGUMENT);
    REQUIRE(mla_timer_start(ctx, nullptr, &t) == MLA_SUCCESS);
    CHECK(mla_timer_stop_ms(ctx, t, nullptr) == MLA_ERROR_INVALID_ARGUMENT);  // timer kept
    CHECK(mla_timer_stop_ms(ctx, t, &ms) == MLA_SUCCESS);
    CHECK(fake_rt_launch_count() == 0);
    CHECK(fake_rt_call_count("cuMemsetD8Async") == 0);
    mla_context_destroy(ctx);
}
