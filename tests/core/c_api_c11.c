/* c_api_c11.c - compiles mla_c_api.h as C11 with -Wall -Wextra -Werror -pedantic (see
 * meson.build) and checks, from C, the INIT macros and a few device-free calls. */
#include <stdio.h>
#include <string.h>

#include "mla_c_api.h"

int main(void) {
    mla_arch_info info = MLA_ARCH_INFO_INIT;
    mla_context_options opts = MLA_CONTEXT_OPTIONS_INIT;
    mla_decode_shape shape = MLA_DECODE_SHAPE_INIT;
    mla_head_plan plan = MLA_HEAD_PLAN_INIT;
    mla_metadata_params params = MLA_METADATA_PARAMS_INIT;
    mla_host_problem problem = MLA_HOST_PROBLEM_INIT;
    mla_decode_args args = MLA_DECODE_ARGS_INIT;
    int failures = 0;
#define EXPECT(cond)                                           \
    do {                                                       \
        if (!(cond)) {                                         \
            fprintf(stderr, "FAILED: %s\n", #cond);            \
            ++failures;                                        \
        }                                                      \
    } while (0)
    EXPECT(info.struct_size == sizeof(mla_arch_info));
    EXPECT(opts.struct_size == sizeof(mla_context_options));
    EXPECT(shape.struct_size == sizeof(mla_decode_shape));
    EXPECT(plan.struct_size == sizeof(mla_head_plan));
    EXPECT(params.struct_size == sizeof(mla_metadata_params));
    EXPECT(problem.struct_size == sizeof(mla_host_problem));
    EXPECT(args.struct_size == sizeof(mla_decode_args));
    EXPECT(mla_version() == MLA_VERSION);
    EXPECT(strcmp(mla_status_string(MLA_ERROR_TABLE), "MLA_ERROR_TABLE") == 0);
    EXPECT(mla_arch_query("gfx942", &info) == MLA_SUCCESS);
    EXPECT(info.known == 1 && info.default_num_cus == 304);
    EXPECT(mla_context_create(&opts, NULL) == MLA_ERROR_INVALID_ARGUMENT);
    if (failures == 0) printf("C11: mla_c_api.h compiles and works from C\n");
    return failures ? 1 : 0;
}
