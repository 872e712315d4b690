// The catalog's background work (reading a million names, filtering them, importing) yields the CPU
// to the GUI thread. On Linux nice is per thread: at nice 10 a worker gets about a tenth of a core
// that the GUI thread wants at the same moment, and all of it otherwise. Not SCHED_IDLE
// (QThread::IdlePriority): under other processes' load that would starve the worker outright.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

namespace lockscope {

inline void lowerThisThreadsPriority() { ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10); }

}  // namespace lockscope
