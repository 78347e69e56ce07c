#pragma once
// Writing a whole file so that it is never seen half-written.

#include <attnscope/result.h>

#include <memory>
#include <string>

namespace attnscope::engine {

class AtomicFile;

/// Writes `contents` to `path` through a temporary file in the same folder, flushed and renamed
/// into place: on any failure (an Io error naming the path) nothing is left and an older file of
/// that name is untouched.
Result<void> writeFileAtomically(const std::string& path, const std::string& contents);

/// Whether `path` can be written as a file (before long work is spent on it): its folder exists and
/// it is not a folder itself. An Io error naming the path otherwise.
Result<void> checkOutputPath(const std::string& path);

/// A whole file staged under a temporary name beside `path`, for commands with several outputs:
/// stage each, write the others, then commit; destroyed uncommitted, it leaves nothing behind.
class StagedFile {
public:
    /// Writes `contents` to the temporary file. Io errors name `path` (also when it is a folder).
    static Result<StagedFile> stage(const std::string& path, const std::string& contents);
    StagedFile(StagedFile&&) noexcept;
    StagedFile& operator=(StagedFile&&) = delete;
    ~StagedFile();
    /// Flushes and renames it into place.
    Result<void> commit();

private:
    explicit StagedFile(std::unique_ptr<AtomicFile> file);
    std::unique_ptr<AtomicFile> m_file;
};

}  // namespace attnscope::engine
