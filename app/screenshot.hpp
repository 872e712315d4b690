// lockscope --screenshot: the window as it looks after a delay, saved as a PNG, then quit. The
// docs' screenshots are made this way (scripts/screenshots), so each option here is what one of
// them needs to show: a chosen lock selected, a dialog open over the window.
#pragma once

#include <QString>

namespace lockscope {

class MainWindow;

struct ScreenshotRequest {
    QString file;
    int delayMs = 4000;
    // Select (and expand) the first lock whose Name contains this; empty: the first lock with
    // waiters, else the first lock. A lock of a live workload comes and goes: the shot waits up to
    // kSelectWaitMs more for it to show, with waiters if they come in that time, and fails rather
    // than show something else.
    QString select;
    static constexpr int kSelectWaitMs = 15000;
};

// Arms the timer. The application exits with 0 once the file is written, 1 when it is not (or
// the lock to select never showed up). Visible dialogs are drawn over the window where they are.
void armScreenshot(MainWindow& window, const ScreenshotRequest& request);

}  // namespace lockscope
