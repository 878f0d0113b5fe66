// main.cpp - the `mla` command-line program: dispatches to one subcommand per file.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "mla_c_api.h"

namespace {

struct Command {
    const char* name;
    int (*run)(int, char**);
    const char* help;
};

const Command kCommands[] = {
#include "command_table.inc"
};

void usage(FILE* f) {
    std::fprintf(f, "usage: mla [--version] <command> [options]\n\ncommands:\n");
    for (const Command& c : kCommands) std::fprintf(f, "  %-8s %s\n", c.name, c.help);
    std::fprintf(f, "\n'mla <command> --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
        std::printf("mla %s (libmla %s, API %d)\n", mla_version_string(), mla_version_string(),
                    mla_version());
        return 0;
    }
    if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    for (const Command& c : kCommands)
        if (!std::strcmp(argv[1], c.name)) return c.run(argc - 2, argv + 2);
    std::fprintf(stderr, "mla: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
