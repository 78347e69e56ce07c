// A session file (File → Open Session, a dropped or recent file): classified by content, parsed,
// and when it parses, written back and read again to the same state.
#include "gui/settings/session.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using attnscope::app::Session;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    (void)Session::classify(bytes);
    QString error;
    auto state = Session::parse(bytes, QStringLiteral("fuzzed.attnscope"), &error);
    if (!state) return 0;
    QString again;
    auto reread = Session::parse(state->toJson(), QStringLiteral("written.attnscope"), &again);
    // (a state the reader accepted and the writer wrote must read back unchanged)
    if (!reread || *reread != *state) std::abort();
    return 0;
}
