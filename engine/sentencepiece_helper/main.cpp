// attnscope-sentencepiece: Debian's libsentencepiece behind a two-command text protocol, run by
// the engine as a child process (engine/src/io/tokenize/sentencepiece_tokenizer.cpp). The library
// carries its own copy of protobuf-lite and exports it; in a process that has LibTorch (the
// system libprotobuf) the two collide before main, so no AttnScope binary links it but this one.
//
//   attnscope-sentencepiece pieces MODEL        one line per id: control (0/1) TAB the piece in hex
//   attnscope-sentencepiece encode MODEL FILE   one line per piece of FILE's text: id TAB begin TAB end
//
// Errors: the library's message on stderr, exit status 1; usage errors exit 2.

#include <sentencepiece_processor.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

int fail(const std::string& message) {
    std::cerr << message << "\n";
    return 1;
}

std::string hex(const std::string& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (const unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

int listPieces(const sentencepiece::SentencePieceProcessor& sp) {
    std::string out;
    for (int id = 0; id < sp.GetPieceSize(); ++id)
        out += std::string(sp.IsControl(id) ? "1" : "0") + "\t" + hex(sp.IdToPiece(id)) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

int encode(const sentencepiece::SentencePieceProcessor& sp, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(path + ": cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    sentencepiece::ImmutableSentencePieceText pieces;
    const auto status = sp.Encode(text.str(), pieces.mutable_proto());
    if (!status.ok()) return fail(status.ToString());
    std::string out;
    for (const auto& p : pieces.pieces())
        out += std::to_string(p.id()) + "\t" + std::to_string(p.begin()) + "\t" + std::to_string(p.end()) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string command = argc > 1 ? argv[1] : "";
    if (!((command == "pieces" && argc == 3) || (command == "encode" && argc == 4))) {
        std::cerr << "usage: attnscope-sentencepiece pieces MODEL | encode MODEL TEXTFILE\n";
        return 2;
    }
    sentencepiece::SentencePieceProcessor sp;
    const auto status = sp.Load(argv[2]);
    if (!status.ok()) return fail(status.ToString());
    return command == "pieces" ? listPieces(sp) : encode(sp, argv[3]);
}
