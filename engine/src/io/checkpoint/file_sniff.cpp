// Content sniffing of files users put in model folders (FORMATS.md §1.1): the common mistakes
// (a Git LFS pointer, an HTML page from a failed download, a pickle) get a message of their own.

#include <attnscope/model_checkpoint.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <string_view>

namespace attnscope::engine {
namespace {

constexpr std::size_t kHeadBytes = 4096;
/// A zip's central directory sits at its end; names of TorchScript and torch.save members are
/// found there (and in the local headers at the start) without a full zip reader.
constexpr std::size_t kTailBytes = 1u << 20;

std::string readRange(std::ifstream& in, std::uint64_t offset, std::size_t count) {
    std::string out(count, '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(out.data(), static_cast<std::streamsize>(count));
    out.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
    return out;
}

std::string_view skipSpaceAndBom(std::string_view s) {
    if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    return s;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
    }
    return true;
}

bool looksLikeSafetensors(const std::string& head, std::uint64_t size) {
    if (head.size() < 9) return false;
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[static_cast<std::size_t>(i)]);
    if (n == 0 || n > size - 8) return false;
    const std::string_view json = skipSpaceAndBom(std::string_view(head).substr(8));
    return !json.empty() && json.front() == '{';
}

}  // namespace

const char* fileKindName(FileKind kind) {
    switch (kind) {
    case FileKind::Missing: return "missing";
    case FileKind::Empty: return "empty file";
    case FileKind::Safetensors: return "safetensors";
    case FileKind::Gguf: return "GGUF";
    case FileKind::GitLfsPointer: return "Git LFS pointer";
    case FileKind::Html: return "HTML page";
    case FileKind::TorchScriptZip: return "TorchScript archive";
    case FileKind::TorchPickleZip: return "PyTorch pickle (zip)";
    case FileKind::Zip: return "zip archive";
    case FileKind::Pickle: return "Python pickle";
    case FileKind::Json: return "JSON";
    case FileKind::Other: return "unrecognised data";
    }
    return "?";
}

SniffedFile sniffFile(const std::string& path) {
    SniffedFile out;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        out.kind = FileKind::Missing;
        return out;
    }
    out.size = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in.tellg()));
    if (out.size == 0) {
        out.kind = FileKind::Empty;
        return out;
    }
    const std::string head = readRange(in, 0, static_cast<std::size_t>(std::min<std::uint64_t>(out.size, kHeadBytes)));
    const std::string_view text = skipSpaceAndBom(head);

    if (head.rfind("GGUF", 0) == 0) {
        out.kind = FileKind::Gguf;
    } else if (head.rfind("version https://git-lfs", 0) == 0) {
        out.kind = FileKind::GitLfsPointer;
    } else if (head.rfind("PK\x03\x04", 0) == 0) {
        const std::uint64_t tailStart = out.size > kTailBytes ? out.size - kTailBytes : 0;
        const std::string names = head + readRange(in, tailStart, static_cast<std::size_t>(out.size - tailStart));
        if (names.find("constants.pkl") != std::string::npos || names.find("/code/") != std::string::npos)
            out.kind = FileKind::TorchScriptZip;
        else if (names.find("data.pkl") != std::string::npos)
            out.kind = FileKind::TorchPickleZip;
        else
            out.kind = FileKind::Zip;
    } else if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x80 &&
               static_cast<unsigned char>(head[1]) >= 2 && static_cast<unsigned char>(head[1]) <= 5) {
        out.kind = FileKind::Pickle;
    } else if (looksLikeSafetensors(head, out.size)) {
        out.kind = FileKind::Safetensors;
    } else if (startsWithNoCase(text, "<!doctype html") || startsWithNoCase(text, "<html") ||
               startsWithNoCase(text, "<head") || startsWithNoCase(text, "<!--")) {
        out.kind = FileKind::Html;
    } else if (!text.empty() && (text.front() == '{' || text.front() == '[')) {
        out.kind = FileKind::Json;
    }
    return out;
}

std::string weightsFileProblem(const std::string& path, const SniffedFile& sniffed) {
    switch (sniffed.kind) {
    case FileKind::Safetensors: return {};
    case FileKind::Missing: return path + ": file not found";
    case FileKind::Empty: return path + ": the file is empty (an interrupted download?)";
    case FileKind::GitLfsPointer:
        return path + ": this is a Git LFS pointer (" + std::to_string(sniffed.size) +
               " bytes), not the weights; fetch the real file with 'git lfs pull' or download it directly";
    case FileKind::Html:
        return path + ": this is an HTML page, not weights (a failed or redirected download); download the file again";
    case FileKind::TorchScriptZip:
        return path + ": this is a TorchScript archive, which is a program, not data; it is refused for safety. "
                      "Export the weights to safetensors (model.safetensors) and open that";
    case FileKind::TorchPickleZip:
    case FileKind::Pickle:
        return path + ": this is a PyTorch pickle, which can run code when loaded; it is refused for safety. "
                      "Convert it to safetensors (model.safetensors) and open that";
    case FileKind::Zip: return path + ": a zip archive that is not a checkpoint we can read; expected safetensors";
    case FileKind::Json: return path + ": JSON text where safetensors weights were expected";
    case FileKind::Gguf: return path + ": a GGUF file inside a model folder; open the file itself as the model";
    case FileKind::Other: return path + ": not a safetensors file (unrecognised data)";
    }
    return path + ": unreadable";
}

}  // namespace attnscope::engine
