// Everything of pglock in one include.
#pragma once

#include "pglock/conninfo.hpp"
#include "pglock/context.hpp"
#include "pglock/error.hpp"
#include "pglock/fence.hpp"
#include "pglock/keepalive.hpp"
#include "pglock/holder_identity.hpp"
#include "pglock/key.hpp"
#include "pglock/key_collision.hpp"
#include "pglock/key_schemes.hpp"
#include "pglock/lock.hpp"
#include "pglock/monitor.hpp"
#include "pglock/observe.hpp"
#include "pglock/pool.hpp"
#include "pglock/resolve.hpp"
#include "pglock/session.hpp"
#include "pglock/transaction.hpp"
