// Waiting for a poll result in the poller tests: both the plain and the fault tests need it.
#pragma once

#include <QDeadlineTimer>
#include <QObject>
#include <QtTest>

#include <chrono>
#include <functional>

#include "poller/poller.hpp"

namespace pglock::test {

// Waits until a result of `poller` satisfies `pred`, processing events meanwhile; nullptr on
// timeout. `context` owns the temporary connection.
inline lockscope::PollResultPtr waitForResult(QObject* context, lockscope::Poller& poller,
                                              const std::function<bool(const lockscope::PollResultPtr&)>& pred,
                                              std::chrono::milliseconds timeout) {
    lockscope::PollResultPtr found;
    auto c = QObject::connect(&poller, &lockscope::Poller::resultReady, context,
                              [&](const lockscope::PollResultPtr& r) {
                                  if (!found && pred(r)) found = r;
                              });
    QDeadlineTimer deadline(timeout);
    while (!found && !deadline.hasExpired()) QTest::qWait(20);
    QObject::disconnect(c);
    return found;
}

}  // namespace pglock::test
