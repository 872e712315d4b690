#include "pglock/conninfo.hpp"

#include <libpq-fe.h>

#include <cstring>
#include <memory>

namespace pglock {
namespace {

struct Parsed {
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options{nullptr, &PQconninfoFree};
    std::string error;
};

Parsed parse(const std::string& conninfo) {
    Parsed out;
    char* err = nullptr;
    out.options.reset(PQconninfoParse(conninfo.c_str(), &err));
    if (!out.options) {
        out.error = err ? err : "out of memory";
        while (!out.error.empty() && (out.error.back() == '\n' || out.error.back() == ' ')) out.error.pop_back();
    }
    if (err) PQfreemem(err);
    return out;
}

}  // namespace

std::optional<std::string> conninfo_error(const std::string& conninfo) {
    Parsed p = parse(conninfo);
    if (p.options) return std::nullopt;
    return p.error;
}

bool conninfo_has_password(const std::string& conninfo) {
    Parsed p = parse(conninfo);
    if (!p.options) return false;
    for (PQconninfoOption* o = p.options.get(); o->keyword; ++o) {
        if (std::strcmp(o->keyword, "password") == 0 && o->val && *o->val) return true;
    }
    return false;
}

std::string conninfo_label(const std::string& conninfo) {
    Parsed p = parse(conninfo);
    if (!p.options) return {};
    auto value = [&](const char* keyword) -> std::string {
        for (PQconninfoOption* o = p.options.get(); o->keyword; ++o) {
            if (std::strcmp(o->keyword, keyword) == 0 && o->val) return o->val;
        }
        return {};
    };
    if (const std::string service = value("service"); !service.empty()) return "service=" + service;
    std::string label;
    if (const std::string user = value("user"); !user.empty()) label += user + "@";
    label += value("host").empty() ? std::string("localhost") : value("host");
    if (const std::string port = value("port"); !port.empty()) label += ":" + port;
    if (const std::string db = value("dbname"); !db.empty()) label += "/" + db;
    return label;
}

}  // namespace pglock
