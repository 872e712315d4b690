#include "models/lock_cells.hpp"

#include "models/locks_model.hpp"
#include "models/server_text.hpp"
#include "pglock/resolve.hpp"

#include <algorithm>

namespace lockscope::columns {

namespace {
// Tooltips show the start of a query; the session panel shows all of it.
constexpr qsizetype kTooltipQueryChars = 500;
}  // namespace

LockName CellContext::name(const LockRowView& row) const { return model_.nameOf(row.id, row.entry); }

std::optional<double> CellContext::heldSeconds(const LockRowView& row) const {
    if (!model_.heldSince_ && !model_.holdStarts_) return std::nullopt;
    std::optional<double> earliest;
    for (const auto& h : row.entry.holders) {
        const auto since = model_.heldSince_ ? model_.heldSince_(row.id, h.pid) : model_.holdStarts_->heldSince(row.id, h.pid);
        if (since && (!earliest || *since < *earliest)) earliest = since;
    }
    if (!earliest) return std::nullopt;
    return std::max(0.0, now() - *earliest);
}

double CellContext::now() const { return model_.now(); }

bool CellContext::isOwnPid(int pid) const { return model_.ownPids_.contains(pid); }

QString joinedText(const std::vector<std::string_view>& values) {
    QString out;
    for (const auto& v : values) {
        if (!out.isEmpty()) out += QLatin1String(", ");
        out += serverText(v);
    }
    return out;
}

QString elidedQuery(const std::string& query) {
    QString q = serverQuery(query);
    if (q.size() > kTooltipQueryChars) q = q.left(kTooltipQueryChars) + QChar(0x2026);
    return q;
}

QString int4PairText(const pglock::monitor::LockEntry& e) {
    return QString::fromStdString(pglock::int4_pair_text(e.pair_first, e.pair_second));
}

}  // namespace lockscope::columns
