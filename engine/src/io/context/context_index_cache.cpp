// The context index kept beside the model: read back when the model and corpus match, otherwise
// built and written for the next time (attnscope/context_search.h).

#include <attnscope/context_search.h>

namespace attnscope::engine {

Result<KeptContextIndex> keptOrBuiltContextIndex(const std::string& corpus, const ModelInfo& model,
                                                 const ContextIndexOptions& options, const ContextForwardFn& forward,
                                                 const ProgressFn& progress, bool rebuild) {
    KeptContextIndex kept;
    const std::uint64_t hash = contextCorpusHash(corpus);
    const std::string identity = options.identity.empty() ? contextModelIdentity(model) : options.identity;
    const auto paths = contextIndexPaths(model.folder, identity, hash, options.space);
    if (!rebuild) {
        for (const std::string& path : paths) {
            auto read = loadContextIndex(path);
            if (!read) {
                if (read.error().code != ErrorCode::NotFound) kept.notices.push_back(read.error().message + "; indexing again");
                continue;
            }
            // (An index the budget cut short says so in its notices; `rebuild` makes it again.)
            if ((*read)->modelIdentity == identity && (*read)->corpusHash == hash && (*read)->corpus == corpus) {
                kept.index = *read;
                kept.path = path;
                kept.reused = true;
                return kept;
            }
        }
    }
    auto built = buildContextIndex(corpus, model, options, forward, progress);
    if (!built) return built.error();
    kept.index = *built;
    for (const std::string& path : paths) {
        auto saved = saveContextIndex(**built, path);
        if (saved) {
            kept.path = path;
            break;
        }
        kept.notices.push_back("could not keep the index: " + saved.error().message);
    }
    return kept;
}

}  // namespace attnscope::engine
