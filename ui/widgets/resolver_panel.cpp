#include "widgets/resolver_panel.hpp"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "models/server_text.hpp"
#include "pglock/key.hpp"
#include "pglock/resolve.hpp"
#include "widgets/name_input.hpp"

namespace lockscope {

ResolverPanel::ResolverPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* row = new QHBoxLayout();
    input_ = new QLineEdit(this);
    input_->setObjectName(QStringLiteral("resolverInput"));
    input_->setPlaceholderText(tr("a lock name, or a key: -7132652647757890940, 0x9d03…, 2634267189/270809732"));
    input_->setClearButtonEnabled(true);
    acceptWholeNames(input_);
    forceName_ = new QCheckBox(tr("as name"), this);
    forceName_->setObjectName(QStringLiteral("resolverAsName"));
    forceName_->setToolTip(tr("Hash the text as a lock name, even when it looks like a key (key_of(\"12345\") is not the key 12345)"));
    row->addWidget(input_, 1);
    row->addWidget(forceName_);
    layout->addLayout(row);

    error_ = new QLabel(this);
    error_->setTextFormat(Qt::PlainText);  // shows server or user text: never as HTML (plain_text.hpp)
    error_->setObjectName(QStringLiteral("resolverError"));
    // The message and its hint wrap: one long line would push the "as name" box it points to
    // out of the side panel.
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #b00020"));
    error_->hide();
    layout->addWidget(error_);

    auto* form = new QFormLayout();
    keyLine_ = new QLabel(this);
    keyLine_->setTextFormat(Qt::PlainText);
    keyLine_->setObjectName(QStringLiteral("resolverKey"));
    keyLine_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    namesLine_ = new QLabel(this);
    namesLine_->setTextFormat(Qt::PlainText);
    namesLine_->setObjectName(QStringLiteral("resolverNames"));
    namesLine_->setWordWrap(true);
    namesLine_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    liveLine_ = new QLabel(this);
    liveLine_->setTextFormat(Qt::PlainText);
    liveLine_->setObjectName(QStringLiteral("resolverLive"));
    liveLine_->setWordWrap(true);
    form->addRow(tr("Key"), keyLine_);
    form->addRow(tr("Names"), namesLine_);
    form->addRow(tr("Now"), liveLine_);
    layout->addLayout(form);

    sql_ = new QPlainTextEdit(this);
    sql_->setObjectName(QStringLiteral("resolverSql"));
    sql_->setReadOnly(true);
    sql_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    sql_->setMaximumHeight(120);
    copy_ = new QPushButton(tr("Copy SQL"), this);
    copy_->setEnabled(false);
    take_ = new QPushButton(tr("Take lock…"), this);
    take_->setObjectName(QStringLiteral("resolverTakeLock"));
    take_->setToolTip(tr("Take this lock by hand (it needs a name: keys are hashes and cannot be reversed)"));
    take_->setEnabled(false);
    layout->addWidget(new QLabel(tr("Find it in pg_locks:"), this));
    layout->addWidget(sql_);
    auto* buttons = new QHBoxLayout();
    buttons->addStretch(1);
    buttons->addWidget(take_);
    buttons->addWidget(copy_);
    layout->addLayout(buttons);
    layout->addStretch(1);

    connect(input_, &QLineEdit::textChanged, this, &ResolverPanel::resolve);
    connect(forceName_, &QCheckBox::toggled, this, &ResolverPanel::resolve);
    connect(copy_, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(sql_->toPlainText()); });
    connect(take_, &QPushButton::clicked, this, [this] {
        if (name_) {
            emit takeLockRequested(*name_);
        } else if (const QStringList names = key_ && namesForKey_ ? namesForKey_(*key_) : QStringList(); names.size() == 1) {
            emit takeLockRequested(names.first().toUtf8());
        }
    });
}

QString ResolverPanel::text() const { return input_->text(); }
void ResolverPanel::setText(const QString& text) { input_->setText(text); }

void ResolverPanel::setLatest(PollResultPtr latest) {
    latest_ = std::move(latest);
    showLive();
}

void ResolverPanel::resolve() {
    key_.reset();
    name_.reset();
    int4Pair_ = false;
    const QString text = input_->text();
    const QByteArray bytes = text.toUtf8();
    const std::string_view view(bytes.constData(), static_cast<std::size_t>(bytes.size()));
    QString problem;
    if (text.isEmpty()) {
        // nothing typed: nothing to say
    } else if (!forceName_->isChecked() && pglock::looks_like_key(view)) {
        const pglock::KeyInput parsed = pglock::parse_key_input(view);
        if (parsed) key_ = *parsed.key;
        // Text meant as a number is never hashed silently; the hint says how to hash it anyway.
        else problem = tr("not a key: %1 — click “as name” to hash it as a name").arg(QString::fromStdString(parsed.error));
        int4Pair_ = parsed && parsed.form == pglock::KeyInputForm::int4_pair;
    } else {
        name_ = bytes;
        key_ = pglock::key_of(view);
    }
    error_->setText(problem);
    error_->setVisible(!problem.isEmpty());
    if (!key_) {
        keyLine_->clear();
        namesLine_->clear();
        liveLine_->clear();
        sql_->clear();
        copy_->setEnabled(false);
        take_->setEnabled(false);
        return;
    }
    const pglock::LockTag tag = pglock::tag_of(*key_);
    if (int4Pair_) {
        // pg_advisory_lock(int4, int4): same tag as a bigint key, another lock, nobody's name.
        const auto a = static_cast<std::int32_t>(tag.classid), b = static_cast<std::int32_t>(tag.objid);
        keyLine_->setText(tr("%1   (classid %2, objid %3, objsubid 2)")
                              .arg(QString::fromStdString(pglock::int4_pair_text(a, b)))
                              .arg(tag.classid)
                              .arg(tag.objid));
        namesLine_->setText(tr("an int4 pair is not a lock name's key"));
        sql_->setPlainText(QString::fromStdString(pglock::pg_locks_sql_pair(a, b)));
        copy_->setEnabled(true);
        take_->setEnabled(false);
        showLive();
        emit resolved(*key_);
        return;
    }
    keyLine_->setText(tr("%1   (classid %2, objid %3, objsubid 1)").arg(*key_).arg(tag.classid).arg(tag.objid));
    QStringList names = namesForKey_ ? namesForKey_(*key_) : QStringList();
    if (name_ && !names.contains(text)) names.prepend(text + tr(" (typed, not in the catalog)"));
    for (QString& shown : names) shown = elideMiddle(serverText(shown));
    namesLine_->setText(names.isEmpty() ? tr("no catalog name hashes to this key") : names.join(QStringLiteral("\n")));
    if (names.size() > 1 && !name_) namesLine_->setText(namesLine_->text() + tr("\n⚠ several names share this key"));
    sql_->setPlainText(QString::fromStdString(pglock::pg_locks_sql(*key_)));
    copy_->setEnabled(true);
    take_->setEnabled(name_.has_value() || (!name_ && names.size() == 1));
    showLive();
    emit resolved(*key_);
}

void ResolverPanel::showLive() {
    if (!key_) return;
    if (!latest_ || !latest_->snapshot) {
        liveLine_->setText(tr("not connected"));
        return;
    }
    const pglock::LockTag tag = pglock::tag_of(*key_);
    const auto form = int4Pair_ ? pglock::monitor::KeyForm::int_pair : pglock::monitor::KeyForm::bigint;
    for (const auto& lock : latest_->snapshot->locks) {
        if (lock.form != form || !(lock.tag == tag)) continue;
        QStringList holders;
        for (const auto& h : lock.holders) {
            const auto b = latest_->snapshot->backends.find(h.pid);
            const QString state = b != latest_->snapshot->backends.end() ? serverText(b->second.state) : QString();
            const QString app = b != latest_->snapshot->backends.end() ? serverText(b->second.application_name) : QString();
            holders << tr("pid %1 (%2%3%4)").arg(h.pid).arg(h.shared ? tr("shared, ") : QString()).arg(state,
                                                                                                       app.isEmpty() ? QString() : QStringLiteral(", ") + app);
        }
        QString line = holders.isEmpty() ? tr("not held") : tr("held by %1").arg(holders.join(QStringLiteral("; ")));
        if (!lock.waiters.empty()) line += tr(" — %n waiting", nullptr, static_cast<int>(lock.waiters.size()));
        liveLine_->setText(line);
        return;
    }
    liveLine_->setText(tr("not held (as of the last poll)"));
}

}  // namespace lockscope
