#pragma once
// The path of a file in this program's folder (the programs and the image decoder module are
// installed side by side).

#include <filesystem>
#include <string>
#include <system_error>

namespace attnscope::app {

/// `name` in the folder of the running program; `error` is set when /proc/self/exe cannot be read.
inline std::string besideThisProgram(const char* name, std::error_code& error) {
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    return (self.parent_path() / name).string();
}

}  // namespace attnscope::app
