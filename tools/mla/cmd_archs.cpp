// cmd_archs.cpp - `mla archs`: placeholder replaced by the foundation work.
