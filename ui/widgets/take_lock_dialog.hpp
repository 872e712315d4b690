// "Take lock": a name (typed, or given by the catalog or the resolver), its key shown live, and
// how to take it: try, blocking, or inside a transaction; exclusive or shared.
#pragma once

#include <QDialog>

#include "actions/own_lock.hpp"

class QButtonGroup;
class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace lockscope {

class TakeLockDialog : public QDialog {
    Q_OBJECT
public:
    // `name` prefills the field; bytes that are not printable UTF-8 are shown escaped (\xHH) and
    // typed escapes are read back, so any name can be taken.
    explicit TakeLockDialog(const QByteArray& name = {}, QWidget* parent = nullptr);

    QByteArray name() const;  // empty when the field does not parse
    TakeMode mode() const;
    bool shared() const;
    void setMode(TakeMode mode);
    void setShared(bool shared);

private:
    void refresh();

    QLineEdit* nameEdit_;
    QLabel* keyLabel_;
    QButtonGroup* modes_;
    QCheckBox* shared_;
    QPushButton* ok_;
};

}  // namespace lockscope
