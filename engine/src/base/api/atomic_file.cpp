#include "base/api/atomic_file.h"

#include "base/api/direct_writes.h"

#include <attnscope/atomic_file.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope::engine {
namespace {

// Written bytes are handed to the disk in steps of this size while the rest is still being
// written: the data is on its way to the disk within moments, without the run waiting for it.
constexpr std::uint64_t kWriteBackStep = 8ull << 20;

}  // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path, std::uint64_t expectedBytes) {
    std::string tmpPath = path + ".tmp-XXXXXX";
    const int fd = ::mkostemp(tmpPath.data(), O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return makeError(ErrorCode::Io, path + ": cannot create a temporary file: " + std::strerror(err));
    }
    AtomicFile file(path, std::move(tmpPath), fd);
    // mkostemp creates the file 0600; results and exports are ordinary user files.
    if (::fchmod(fd, 0644) != 0) {
        const int err = errno;
        file.abandon();
        return file.error("cannot set permissions", err);
    }
    if (expectedBytes >= kDirectWorthyBytes) file.m_direct = DirectWrites::open(file.m_tmpPath);
    return file;
}

AtomicFile::AtomicFile(std::string path, std::string tmpPath, int fd)
    : m_path(std::move(path)), m_tmpPath(std::move(tmpPath)), m_fd(fd) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_path(std::move(other.m_path)), m_tmpPath(std::move(other.m_tmpPath)), m_fd(std::exchange(other.m_fd, -1)),
      m_direct(std::move(other.m_direct)), m_written(other.m_written), m_writtenBack(other.m_writtenBack) {}

AtomicFile::~AtomicFile() { abandon(); }

void AtomicFile::abandon() {
    m_direct.reset();
    if (m_fd < 0) return;
    ::close(m_fd);
    ::unlink(m_tmpPath.c_str());
    m_fd = -1;
}

Error AtomicFile::error(const std::string& what, int err) const {
    return Error{ErrorCode::Io, m_path + ": " + what + ": " + std::strerror(err)};
}

Result<void> AtomicFile::write(const void* bytes, std::size_t size) {
    if (m_fd < 0) return Error{ErrorCode::Io, m_path + ": write after the file was abandoned"};
    if (m_direct) {
        if (!m_direct->append(bytes, size)) {
            const int err = errno;
            abandon();
            return error("cannot write", err);
        }
        m_written += size;
        return {};
    }
    const auto* p = static_cast<const std::uint8_t*>(bytes);
    while (size > 0) {
        const ssize_t written = ::write(m_fd, p, size);
        if (written < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            abandon();
            return error("cannot write", err);
        }
        p += written;
        size -= static_cast<std::size_t>(written);
        m_written += static_cast<std::uint64_t>(written);
    }
    if (m_written - m_writtenBack >= kWriteBackStep) {
        // (asynchronous: starts the disk writes; the run does not wait for them)
        ::sync_file_range(m_fd, static_cast<off_t>(m_writtenBack), static_cast<off_t>(m_written - m_writtenBack),
                          SYNC_FILE_RANGE_WRITE);
        m_writtenBack = m_written;
    }
    return {};
}

Result<void> AtomicFile::commit() {
    if (m_fd < 0) return Error{ErrorCode::Io, m_path + ": commit after the file was abandoned"};
    // No fsync: waiting for the disk cost 60–150 ms for a 100 MB result, as much as a whole
    // Linformer run at 16k tokens (docs/PERFORMANCE.md), for durability against a power cut in
    // the seconds after a run, which a result that can be recomputed does not need (numpy's and
    // safetensors' own savers do not wait either). What the rename guarantees is kept: a failed,
    // cancelled or killed run never leaves a half-written file under the final name.
    if (m_direct) {
        // (the last direct write covers whole blocks: the file is cut back to its bytes)
        const bool written = m_direct->finish() && ::ftruncate(m_fd, static_cast<off_t>(m_written)) == 0;
        const int err = errno;
        m_direct.reset();
        if (!written) {
            abandon();
            return error("cannot write", err);
        }
    }
    const int fd = std::exchange(m_fd, -1);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(m_tmpPath.c_str());
        return error("cannot close", err);
    }
    if (::rename(m_tmpPath.c_str(), m_path.c_str()) != 0) {
        const int err = errno;
        ::unlink(m_tmpPath.c_str());
        return error("cannot rename the temporary file into place", err);
    }
    return {};
}

Result<void> checkOutputPath(const std::string& path) {
    if (path.empty()) return makeError(ErrorCode::Io, "an output file name is empty");
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
        return makeError(ErrorCode::Io, path + ": is a folder, not a file name");
    const auto slash = path.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        return makeError(ErrorCode::Io, path + ": the folder " + folder + " does not exist");
    if (::access(folder.c_str(), W_OK) != 0)
        return makeError(ErrorCode::Io, path + ": the folder " + folder + " is not writable");
    return {};
}

StagedFile::StagedFile(std::unique_ptr<AtomicFile> file) : m_file(std::move(file)) {}
StagedFile::StagedFile(StagedFile&&) noexcept = default;
StagedFile::~StagedFile() = default;

Result<StagedFile> StagedFile::stage(const std::string& path, const std::string& contents) {
    if (auto usable = checkOutputPath(path); !usable) return usable.error();
    auto file = AtomicFile::create(path);
    if (!file) return file.error();
    if (auto written = file->write(contents.data(), contents.size()); !written) return written.error();
    return StagedFile(std::make_unique<AtomicFile>(std::move(file.value())));
}

Result<void> StagedFile::commit() {
    if (!m_file) return makeError(ErrorCode::Io, "a staged file committed twice");
    auto done = m_file->commit();
    m_file.reset();
    return done;
}

Result<void> writeFileAtomically(const std::string& path, const std::string& contents) {
    auto file = AtomicFile::create(path);
    if (!file) return file.error();
    if (auto written = file->write(contents.data(), contents.size()); !written) return written.error();
    return file->commit();
}

}  // namespace attnscope::engine
