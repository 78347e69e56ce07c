#pragma once
// Token ids from an independent JavaScript tokenizer run under node: a script prints one line per
// corpus string, "<UTF-8 bytes in hex>\t<ids separated by spaces>" (tests/golden/tokenizers/*.cjs).

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::testing {

struct ParityCase {
    std::string text;
    std::vector<std::int64_t> ids;
};

inline std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

inline std::string shellQuote(const std::string& s) {
    std::string out = "'";
    for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

inline std::string fromHex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

/// Runs `node script args…` ($ATTNSCOPE_NODE, else node) and parses its lines; a missing node or a
/// failing script is a test failure, never a pass.
inline std::vector<ParityCase> nodeReferenceIds(const std::string& script, const std::vector<std::string>& args) {
    std::string node = env("ATTNSCOPE_NODE");
    if (node.empty()) node = "node";
    if (node.find("NOTFOUND") != std::string::npos) {
        ADD_FAILURE() << "node was not found when configuring; install nodejs (scripts/setup.sh) and re-run cmake";
        return {};
    }
    std::string command = shellQuote(node) + " " + shellQuote(script);
    for (const std::string& a : args) command += " " + shellQuote(a);
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) {
        ADD_FAILURE() << "cannot run: " << command;
        return {};
    }
    std::string output;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    const int status = pclose(pipe);
    if (status != 0) {
        ADD_FAILURE() << "node exited with status " << status << " running: " << command
                      << " (is node installed? scripts/setup.sh installs nodejs)";
        return {};
    }
    std::vector<ParityCase> cases;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        const std::size_t tab = line.find('\t');
        if (tab == std::string::npos) continue;
        ParityCase c{fromHex(line.substr(0, tab)), {}};
        std::istringstream ids(line.substr(tab + 1));
        std::int64_t id = 0;
        while (ids >> id) c.ids.push_back(id);
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace attnscope::testing
