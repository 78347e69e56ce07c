#include "tokenize/sentencepiece_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr const char* kFileName = "libattnscope_sentencepiece.so";

std::vector<std::string> candidates() {
    std::vector<std::string> out;
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        out.push_back((exe.parent_path() / kFileName).string());
        out.push_back((exe.parent_path() / ".." / "lib" / kFileName).string());
    }
#ifdef ATTNSCOPE_SENTENCEPIECE_SHIM
    out.push_back(ATTNSCOPE_SENTENCEPIECE_SHIM);
#endif
    return out;
}

template <class Fn>
bool bind(void* handle, const char* name, Fn& out) {
    out = reinterpret_cast<Fn>(dlsym(handle, name));
    return out != nullptr;
}

Result<const SentencePieceLibrary*> open() {
    static SentencePieceLibrary library;
    std::string tried;
    for (const std::string& path : candidates()) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
            tried += (tried.empty() ? "" : ", ") + path;
            continue;
        }
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
        if (!handle) {
            const char* why = dlerror();
            return makeError(ErrorCode::Unsupported, path + ": cannot be opened (" + std::string(why ? why : "?") +
                                                         "); SentencePiece tokenizers need Debian's libsentencepiece0");
        }
        SentencePieceLibrary& l = library;
        if (!bind(handle, "attnscope_spm_load", l.load) || !bind(handle, "attnscope_spm_free", l.free) ||
            !bind(handle, "attnscope_spm_piece_size", l.pieceSize) || !bind(handle, "attnscope_spm_encode", l.encode) ||
            !bind(handle, "attnscope_spm_id_to_piece", l.idToPiece) || !bind(handle, "attnscope_spm_piece_to_id", l.pieceToId) ||
            !bind(handle, "attnscope_spm_is_control", l.isControl) || !bind(handle, "attnscope_spm_decode", l.decode))
            return makeError(ErrorCode::Unsupported, path + ": not AttnScope's SentencePiece library (a function is missing)");
        return &library;  // never closed: processors live as long as their tokenizers
    }
    return makeError(ErrorCode::Unsupported, std::string(kFileName) + " not found (looked in " + tried +
                                                 "): SentencePiece tokenizers are not available in this build");
}

}  // namespace

Result<const SentencePieceLibrary*> sentencePieceLibrary() {
    static std::once_flag once;
    static Result<const SentencePieceLibrary*> opened = makeError(ErrorCode::Internal, "not opened");
    std::call_once(once, [] { opened = open(); });
    return opened;
}

}  // namespace attnscope::engine
