// Name ↔ key: type a name to get its key, its pg_locks pair and the SQL that finds it; type a key
// (decimal, 0x hex, or a classid/objid pair) to get the catalog names that map to it. Either way
// it shows whether the lock is held right now and by whom, from the latest poll. Bad input gets
// an inline message.
#pragma once

#include <QWidget>

#include <functional>
#include <optional>

#include "poller/poll_result.hpp"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace lockscope {

class ResolverPanel : public QWidget {
    Q_OBJECT
public:
    using NamesForKey = std::function<QStringList(qint64 key)>;

    explicit ResolverPanel(QWidget* parent = nullptr);

    void setNamesForKey(NamesForKey lookup) { namesForKey_ = std::move(lookup); }
    void setLatest(PollResultPtr latest);  // refreshes the live state line
    void setText(const QString& text);     // e.g. from the locks view's selection
    QString text() const;

    // What the panel resolved to, for "take lock" and tests: the key, and the name when the input
    // was one.
    std::optional<qint64> currentKey() const { return key_; }
    std::optional<QByteArray> currentName() const { return name_; }
    // The input was the int4-pair form ("(1, 2) int4 pair"): currentKey() then only carries its
    // pg_locks tag (classid << 32 | objid); no name hashes to it.
    bool currentIsInt4Pair() const { return int4Pair_; }

signals:
    void resolved(qint64 key);
    // "Take lock…" pressed: the typed name, or the catalog's only name for a typed key.
    void takeLockRequested(const QByteArray& name);

private:
    void resolve();
    void showLive();

    QLineEdit* input_;
    QCheckBox* forceName_;
    QLabel* error_;
    QLabel* keyLine_;
    QLabel* namesLine_;
    QLabel* liveLine_;
    QPlainTextEdit* sql_;
    QPushButton* copy_;
    QPushButton* take_;
    NamesForKey namesForKey_;
    PollResultPtr latest_;
    std::optional<qint64> key_;
    std::optional<QByteArray> name_;
    bool int4Pair_ = false;
};

}  // namespace lockscope
