// catch_main.cpp - the one translation unit with Catch2's main (compiled once).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
