// fake_codeobject_root.h - code-object roots for libmla on the fake runtime, without a test
// framework (the Catch2 suites wrap these in fake_test_util.h; benchmark programs use them as is):
// the project's tables copied into a temporary root, and a fake image for every code object
// they name. Header-only.
#pragma once
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "fake_runtime.h"

namespace fake_root {

inline bool copy_file(const std::string& from, const std::string& to) {
    std::ifstream in(from, std::ios::binary);
    if (!in.good()) return false;
    std::ofstream out(to, std::ios::binary);
    out << in.rdbuf();
    return out.good();
}

// A fake code object (fake_rt_format_image) whose payload is `tag`, written to `path`.
inline bool write_image(const std::string& path, const std::string& tag) {
    std::vector<unsigned char> img(tag.size() + FAKE_RT_IMAGE_HEADER);
    if (fake_rt_format_image(tag.data(), tag.size(), img.data(), img.size()) != img.size()) return false;
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(img.data()), std::streamsize(img.size()));
    return out.good();
}

// A new root under /tmp holding sm_90a/decode/mla_decode.csv and sm_90a/reduce/mla_reduce.csv
// from `tables` (the project's codeobjects/sm_90a), or with the text decode_csv / reduce_csv
// instead where that is not empty (a test's own rows), and a fake image, tagged with its file
// name without extension, for every code object (the co_name column) they name. "" on failure.
inline std::string sm90_decode_root(const std::string& tables, const std::string& decode_csv = "",
                                    const std::string& reduce_csv = "") {
    char tmpl[] = "/tmp/mla_fake_root_XXXXXX";
    if (!mkdtemp(tmpl)) return "";
    const std::string root = tmpl, arch = root + "/sm_90a";
    if (std::system(("mkdir -p " + arch + "/decode " + arch + "/reduce").c_str()) != 0) return "";
    for (const std::string dir : {"decode", "reduce"}) {
        const std::string t = dir + "/mla_" + dir + ".csv";
        const std::string& text = dir == "decode" ? decode_csv : reduce_csv;
        if (text.empty() ? !copy_file(tables + "/" + t, arch + "/" + t)
                         : !(std::ofstream(arch + "/" + t) << text).good())
            return "";
        std::ifstream in(arch + "/" + t);
        std::string line;
        std::getline(in, line);  // header: the index of co_name
        int col = 0;
        for (size_t at = 0; at < line.find("co_name"); ++at) col += line[at] == ',';
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            size_t b = 0;
            for (int c = 0; c < col; ++c) b = line.find(',', b) + 1;
            const std::string co = line.substr(b, line.find(',', b) - b);
            if (!write_image(arch + "/" + dir + "/" + co, co.substr(0, co.rfind('.')))) return "";
        }
    }
    return root;
}

}  // namespace fake_root
