#include "widgets/take_lock_dialog.hpp"

#include <QButtonGroup>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

#include "pglock/key.hpp"
#include "stores/name_import.hpp"
#include "widgets/name_input.hpp"

namespace lockscope {

TakeLockDialog::TakeLockDialog(const QByteArray& name, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Take lock"));
    setObjectName(QStringLiteral("takeLockDialog"));
    nameEdit_ = new QLineEdit(this);
    nameEdit_->setObjectName(QStringLiteral("takeLockName"));
    acceptWholeNames(nameEdit_);  // before the text goes in: a long name is never cut
    nameEdit_->setText(names::printable(name));
    nameEdit_->setPlaceholderText(tr("lock name, e.g. orders.daily-rollup"));
    nameEdit_->setMinimumWidth(380);
    keyLabel_ = new QLabel(this);
    keyLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    modes_ = new QButtonGroup(this);
    auto* tryMode = new QRadioButton(tr("Try: take it now or report who holds it"), this);
    auto* blocking = new QRadioButton(tr("Blocking: wait in the server's queue (Cancel stops the wait)"), this);
    auto* xact = new QRadioButton(tr("Transaction: hold inside an open transaction until commit or rollback"), this);
    modes_->addButton(tryMode, static_cast<int>(TakeMode::Try));
    modes_->addButton(blocking, static_cast<int>(TakeMode::Blocking));
    modes_->addButton(xact, static_cast<int>(TakeMode::Transaction));
    tryMode->setChecked(true);
    shared_ = new QCheckBox(tr("Shared (other shared holders allowed, exclusive ones kept out)"), this);

    auto* note = new QLabel(tr("The lock is held on its own session of this app until you release it, "
                               "and shows as \"this app\" in the locks view."),
                            this);
    note->setWordWrap(true);
    note->setStyleSheet(QStringLiteral("color: palette(mid)"));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    ok_->setText(tr("Take lock"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(nameEdit_, &QLineEdit::textChanged, this, &TakeLockDialog::refresh);

    auto* form = new QFormLayout;
    form->addRow(tr("Name:"), nameEdit_);
    form->addRow(tr("Key:"), keyLabel_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(tryMode);
    layout->addWidget(blocking);
    layout->addWidget(xact);
    layout->addWidget(shared_);
    layout->addWidget(note);
    layout->addWidget(buttons);
    refresh();
}

QByteArray TakeLockDialog::name() const {
    const QByteArray typed = nameEdit_->text().toUtf8();
    if (typed.isEmpty()) return {};
    return names::unescapeName(typed).value_or(QByteArray());
}

TakeMode TakeLockDialog::mode() const { return static_cast<TakeMode>(modes_->checkedId()); }
bool TakeLockDialog::shared() const { return shared_->isChecked(); }
void TakeLockDialog::setMode(TakeMode mode) { modes_->button(static_cast<int>(mode))->setChecked(true); }
void TakeLockDialog::setShared(bool shared) { shared_->setChecked(shared); }

void TakeLockDialog::refresh() {
    const QByteArray typed = nameEdit_->text().toUtf8();
    QString why;
    const auto bytes = typed.isEmpty() ? std::optional<QByteArray>() : names::unescapeName(typed, &why);
    if (!bytes || bytes->isEmpty()) {
        keyLabel_->setText(typed.isEmpty() ? tr("(type a name)") : tr("<span style='color:#b00020'>%1</span>").arg(why.toHtmlEscaped()));
        ok_->setEnabled(false);
        return;
    }
    const auto key = pglock::key_of(std::string_view(bytes->constData(), static_cast<std::size_t>(bytes->size())));
    const auto tag = pglock::tag_of(key);
    keyLabel_->setText(tr("%1  (classid %2, objid %3)").arg(key).arg(tag.classid).arg(tag.objid));
    ok_->setEnabled(true);
}

}  // namespace lockscope
