// TCP keepalives and the TCP user timeout of a session: how long a connection whose network
// silently went away (a cut link, a dead NAT entry, a server host that lost power: no FIN, no RST)
// stays "up" before the kernel gives up on it. Without them an idle lock session looks alive for
// hours (the kernel default keepalive idle time is 2 h), and so does its guard.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace pglock {

struct Keepalive {
    // false: send no keepalive settings at all (the conninfo's, libpq's and the kernel's apply).
    bool enabled = true;
    // Defaults: an idle session is probed after 10 s of silence, then every 5 s; 3 unanswered
    // probes end it, so a silent cut is seen about 25 s after the last byte from the server.
    // A lock that its holder cannot tell is still held is worth little; 25 s is long enough that
    // a brief network hiccup (a switch failover, a few lost packets) does not cost the lock.
    std::chrono::seconds idle{10};
    std::chrono::seconds interval{5};
    int count = 3;
    // Bounds how long sent data (a statement, an unlock) may stay unacknowledged, which
    // keepalives do not cover. On Linux, once set it also replaces `count` as the keepalive
    // limit (the connection ends when probes have gone unanswered this long), so it is set to
    // the keepalive bound, idle + interval * count: one number for both ways of noticing.
    // 0 leaves the kernel's default (retransmissions for ~15 min).
    std::chrono::milliseconds user_timeout{25000};
};

// The libpq connection keywords for `k` (keepalives, keepalives_idle, keepalives_interval,
// keepalives_count, tcp_user_timeout), empty when disabled. They are meant to be given to libpq
// BEFORE the conninfo, so that a value the user wrote in the conninfo wins. libpq ignores them
// on unix-socket connections.
std::vector<std::pair<std::string, std::string>> keepalive_keywords(const Keepalive& k);

}  // namespace pglock
