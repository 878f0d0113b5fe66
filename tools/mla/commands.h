// commands.h - the subcommands of the `mla` program, one file each (cmd_<name>.cpp).
// Each takes the arguments after its name and returns the process exit code.
#pragma once

int cmd_archs(int argc, char** argv);   // cmd_archs.cpp : list archs, --check missing files
int cmd_query(int argc, char** argv);   // cmd_query.cpp : shape-support verdict (issue 3)
int cmd_plan(int argc, char** argv);    // cmd_plan.cpp  : metadata plan summary (issue 4)
int cmd_run(int argc, char** argv);     // cmd_run.cpp   : the main job (issue 5)
int cmd_bench(int argc, char** argv);   // cmd_bench.cpp : benchmark grid (issue 5)
