// Runs `act` on the first visible top-level widget of type W as soon as one shows up (a modal
// dialog or message box blocks the test in exec(), so the answer has to come from the event
// loop), within about five seconds.
#pragma once

#include <QApplication>
#include <QTimer>
#include <QWidget>

namespace when_shown {

template <typename W, typename F>
void whenShown(F act, int attemptsLeft = 200) {
    QTimer::singleShot(25, [act, attemptsLeft] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (auto* typed = qobject_cast<W*>(w); typed && typed->isVisible()) {
                act(typed);
                return;
            }
        }
        if (attemptsLeft > 0) whenShown<W>(act, attemptsLeft - 1);
    });
}

}  // namespace when_shown
