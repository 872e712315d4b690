#include "widgets/name_input.hpp"

#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <limits>

namespace lockscope {

void acceptWholeNames(QLineEdit* edit) { edit->setMaxLength(std::numeric_limits<int>::max()); }

QString elideMiddle(const QString& text, qsizetype maxChars) {
    if (text.size() <= maxChars) return text;
    qsizetype head = maxChars / 2;
    qsizetype tail = maxChars - head - 1;
    if (head > 0 && text.at(head - 1).isHighSurrogate()) --head;
    if (tail > 0 && text.at(text.size() - tail).isLowSurrogate()) --tail;
    return text.left(head) + QChar(0x2026) + text.right(tail);
}

QString counted(qint64 n, const QString& one, const QString& many) {
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

std::optional<QString> askName(QWidget* parent, const QString& title, const QString& label, const QString& initial) {
    QDialog dialog(parent);
    dialog.setWindowTitle(title);
    auto* layout = new QVBoxLayout(&dialog);
    auto* prompt = new QLabel(label, &dialog);
    prompt->setWordWrap(true);
    auto* edit = new QLineEdit(&dialog);
    edit->setObjectName(QStringLiteral("nameInput"));
    acceptWholeNames(edit);
    edit->setText(initial);
    edit->setMinimumWidth(320);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(prompt);
    layout->addWidget(edit);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted) return std::nullopt;
    return edit->text();
}

}  // namespace lockscope
