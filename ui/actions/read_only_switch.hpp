// The window's read-only switch, shared by every controller that could change the server. The
// controllers check it themselves: a disabled button is a convenience, this is the rule.
#pragma once

#include <QObject>

namespace lockscope {

class ReadOnlySwitch : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    bool on() const noexcept { return on_; }
    void set(bool on) {
        if (on == on_) return;
        on_ = on;
        emit changed(on_);
    }

signals:
    void changed(bool on);

private:
    bool on_ = false;
};

}  // namespace lockscope
