#pragma once
// The "only the latest answer counts" rule of background work: each job takes a ticket when it
// starts; when its answer arrives on the GUI thread it is used only if no later job started and
// the work was not dropped meanwhile (a new result, a head no longer shown).

#include <cstdint>

namespace attnscope::views {

class LatestJob {
public:
    /// A new job: every earlier ticket stops being the latest.
    std::uint64_t start() { return ++m_latest; }
    /// Drops the job in flight (its answer will not be used).
    void drop() { ++m_latest; }
    bool isLatest(std::uint64_t ticket) const { return ticket == m_latest; }

private:
    std::uint64_t m_latest = 0;
};

}  // namespace attnscope::views
