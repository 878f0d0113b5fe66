// api_context.cpp - C API: context creation, the smoke launch, device helpers and timers.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "../../codeobjects/sm_90a/smoke/smoke_params.h"
#include "common/error.h"
#include "context/context.h"
#include "context/struct_io.h"
#include "routing/routing.h"

struct mla_timer {
    mla::rt::Event start = nullptr;
    mla::rt::Event stop = nullptr;
    void* stream = nullptr;
};

namespace {

using mla::rt::Runtime;

bool arch_override_allowed() {
    const char* env = std::getenv("MLA_ALLOW_ARCH_OVERRIDE");
    return env && !std::strcmp(env, "1");
}

// With no arch given: the CUDA driver, else HIP; both failing gives both messages.
Runtime& any_runtime() {
    try {
        return mla::rt::cuda_runtime();
    } catch (const mla::Error& cuda) {
        try {
            return mla::rt::hip_runtime();
        } catch (const mla::Error& hip) {
            mla_status st = (cuda.status() == MLA_ERROR_NO_DEVICE || hip.status() == MLA_ERROR_NO_DEVICE)
                                ? MLA_ERROR_NO_DEVICE
                                : MLA_ERROR_RUNTIME_UNAVAILABLE;
            MLA_FAIL(st, "no GPU runtime usable:\n" << cuda.message() << "\n" << hip.message());
        }
    }
}

// The context's runtime with its device made current on this thread.
Runtime& device_runtime(mla_context* ctx) {
    mla::check_context(ctx);
    ctx->runtime->set_device(ctx->device);
    return *ctx->runtime;
}

}  // namespace

extern "C" {

MLA_API mla_status mla_context_create(const mla_context_options* options, mla_context** out) {
    return mla::guard([&] {
        MLA_CHECK_ARG(out != nullptr, "mla_context_create: out is NULL");
        const mla_context_options defaults = MLA_CONTEXT_OPTIONS_INIT;
        const mla_context_options opt =
            options ? mla::read_struct(options, defaults, "mla_context_create: options") : defaults;
        MLA_CHECK_ARG(opt.device >= 0, "mla_context_create: device " << opt.device << " < 0");
        const std::string want = opt.arch ? opt.arch : "";
        if (opt.arch) mla::route::parse_arch(opt.arch);  // ARCH_NOT_BUILT for an unknown arch
        std::string root;
        if (opt.codeobject_root) {
            std::error_code ec;
            MLA_CHECK_ARG(std::filesystem::is_directory(opt.codeobject_root, ec),
                          "mla_context_create: codeobject_root '" << opt.codeobject_root
                                                                  << "' is not a folder");
            root = opt.codeobject_root;
        }

        Runtime& rt = want.empty() ? any_runtime() : mla::rt::runtime_for_arch(want);
        const int count = rt.device_count();
        if (opt.device >= count)
            MLA_FAIL(MLA_ERROR_NO_DEVICE, "no device " << opt.device << ": the " << rt.name()
                                                       << " runtime (" << rt.library_path()
                                                       << ") reports " << count << " device(s)");
        rt.set_device(opt.device);
        const std::string device_arch = rt.device_arch(opt.device);
        if (!want.empty() && want != device_arch && !rt.is_fake() && !arch_override_allowed())
            MLA_FAIL(MLA_ERROR_INVALID_ARGUMENT,
                     "options->arch is '" << want << "' but device " << opt.device << " is '"
                                          << device_arch
                                          << "' (set MLA_ALLOW_ARCH_OVERRIDE=1 to force)");
        const std::string arch = want.empty() ? device_arch : want;
        try {
            mla::route::parse_arch(arch.c_str());
        } catch (const mla::Error& e) {
            MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT, "device " << opt.device << " is " << arch
                                                         << ": libmla has no kernels for it ("
                                                         << e.message() << ")");
        }

        if (root.empty()) root = mla::reg::Registry::global().default_root();
        if (root.empty()) {
            std::string tried;
            mla::reg::find_root("", &tried);
            MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT, "no code-object root found; searched:\n" << tried);
        }
        auto tables = mla::reg::Registry::global().arch(arch, root);
        if (!tables)
            MLA_FAIL(MLA_ERROR_ARCH_NOT_BUILT, "no code-object tables for " << arch << " under "
                                                                            << root << "/" << arch);

        auto ctx = std::make_unique<mla_context>();
        ctx->device = opt.device;
        ctx->arch = arch;
        ctx->num_cus = rt.device_num_cus(opt.device);
        ctx->root = root;
        ctx->tables = tables;
        ctx->runtime = &rt;  // set last: the destructor unloads through it
        *out = ctx.release();
    });
}

MLA_API void mla_context_destroy(mla_context* ctx) { delete ctx; }

MLA_API const char* mla_context_arch(const mla_context* ctx) {
    return ctx ? ctx->arch.c_str() : nullptr;
}

MLA_API int mla_context_num_cus(const mla_context* ctx) { return ctx ? ctx->num_cus : 0; }

MLA_API mla_status mla_smoke_launch(mla_context* ctx, int32_t* out, int32_t n, int32_t a,
                                    int32_t b, void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(out != nullptr, "mla_smoke_launch: out is NULL");
        MLA_CHECK_ARG(n >= 0, "mla_smoke_launch: n = " << n << " < 0");
        const mla::reg::Row& row = mla::context_row(ctx, "smoke", {{"kind", "smoke"}});
        const long threads = row.get_int("launch_threads", 0);
        if (threads < 1 || threads > 1024)
            MLA_FAIL(MLA_ERROR_TABLE, row.file << ":" << row.line << ": launch_threads must be in "
                                               << "1..1024, got " << row.get("launch_threads"));
        mla::rt::Function f = mla::context_function(ctx, row);
        if (n == 0) return;
        mla_smoke_params p{};
        p.out = out;
        p.n = n;
        p.a = a;
        p.b = b;
        mla::rt::Dim3 grid, block;
        grid.x = static_cast<unsigned>((n + threads - 1) / threads);
        block.x = static_cast<unsigned>(threads);
        device_runtime(ctx).launch(f, grid, block, 0, stream, &p, sizeof(p));
    });
}

MLA_API mla_status mla_device_malloc(mla_context* ctx, void** ptr, size_t bytes) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(ptr != nullptr, "mla_device_malloc: ptr is NULL");
        MLA_CHECK_ARG(bytes > 0, "mla_device_malloc: bytes is 0");
        *ptr = device_runtime(ctx).malloc(bytes);
    });
}

MLA_API mla_status mla_device_free(mla_context* ctx, void* ptr) {
    return mla::guard([&] {
        mla::check_context(ctx);
        if (ptr) device_runtime(ctx).free(ptr);
    });
}

MLA_API mla_status mla_memcpy_htod(mla_context* ctx, void* dst, const void* src, size_t bytes,
                                   void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(bytes == 0 || (dst && src), "mla_memcpy_htod: NULL pointer");
        if (bytes) device_runtime(ctx).memcpy_htod(dst, src, bytes, stream);
    });
}

MLA_API mla_status mla_memcpy_dtoh(mla_context* ctx, void* dst, const void* src, size_t bytes,
                                   void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(bytes == 0 || (dst && src), "mla_memcpy_dtoh: NULL pointer");
        if (bytes) device_runtime(ctx).memcpy_dtoh(dst, src, bytes, stream);
    });
}

MLA_API mla_status mla_memset_d8(mla_context* ctx, void* dst, unsigned char value, size_t bytes,
                                 void* stream) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(bytes == 0 || dst, "mla_memset_d8: dst is NULL");
        if (bytes) device_runtime(ctx).memset_d8(dst, value, bytes, stream);
    });
}

MLA_API mla_status mla_stream_synchronize(mla_context* ctx, void* stream) {
    return mla::guard([&] { device_runtime(ctx).stream_synchronize(stream); });
}

MLA_API mla_status mla_timer_start(mla_context* ctx, void* stream, mla_timer** timer) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(timer != nullptr, "mla_timer_start: timer is NULL");
        Runtime& rt = device_runtime(ctx);
        auto t = std::make_unique<mla_timer>();
        t->stream = stream;
        t->start = rt.event_create();
        try {
            t->stop = rt.event_create();
            rt.event_record(t->start, stream);
        } catch (...) {
            rt.event_destroy(t->start);
            if (t->stop) rt.event_destroy(t->stop);
            throw;
        }
        *timer = t.release();
    });
}

MLA_API mla_status mla_timer_stop_ms(mla_context* ctx, mla_timer* timer, float* ms) {
    return mla::guard([&] {
        mla::check_context(ctx);
        MLA_CHECK_ARG(timer != nullptr, "mla_timer_stop_ms: timer is NULL");
        MLA_CHECK_ARG(ms != nullptr, "mla_timer_stop_ms: ms is NULL");
        std::unique_ptr<mla_timer> t(timer);  // from here on the timer is freed in every case
        Runtime& rt = device_runtime(ctx);
        struct Events {
            Runtime& rt;
            mla_timer& t;
            ~Events() {
                try {
                    rt.event_destroy(t.start);
                    rt.event_destroy(t.stop);
                } catch (...) {
                }
            }
        } events{rt, *t};
        rt.event_record(t->stop, t->stream);
        *ms = rt.event_elapsed_ms(t->start, t->stop);
    });
}

}  // extern "C"
