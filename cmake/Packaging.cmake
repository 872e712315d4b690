# The Debian packages, built by CPack from the install components (scripts/package):
#   libpglock-dev  component dev: the static library, its headers and CMake package (find_package)
#   pglock         component cli: the command-line tool and its sample name catalog
#   lockscope      component app: the desktop app, its desktop file, icon and AppStream metadata
# dpkg-shlibdeps (Debian package dpkg-dev) computes the binaries' Depends from the libraries they
# link; cmake/CPackProjectConfig.cmake stops cpack when it is missing, since CPack would then
# build packages without any dependencies and say nothing.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pglock)
set(CPACK_PACKAGE_VENDOR "pglock developers")
set(CPACK_PACKAGE_CONTACT "pglock developers <dev@pglock.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # binaries only: CMake never strips a static library's symbol table
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/CPackProjectConfig.cmake)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # name_version-release_arch.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_COMPONENTS_ALL dev)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libpglock-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# A static library: its users link libpq and libcrypto themselves (pglockConfig.cmake finds them).
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libpq-dev, libssl-dev")
if(PGLOCK_WITH_PROMETHEUS)
  string(APPEND CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ", prometheus-cpp-dev")
endif()
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "named PostgreSQL advisory locks for C++20 (development files)
The pglock library gives C++ programs named advisory locks on libpq: try, blocking with
cancel, transaction-level and shared locks, run-once helpers, a lost-lock notice, logs and
Prometheus metrics. It shares its key derivation with the Go package gokit/db/lock.
This package has the static library, its headers and its CMake package (find_package(pglock)).")

if(PGLOCK_BUILD_CLI)
  list(APPEND CPACK_COMPONENTS_ALL cli)
  set(CPACK_DEBIAN_CLI_PACKAGE_NAME pglock)
  set(CPACK_DEBIAN_CLI_PACKAGE_SECTION database)
  set(CPACK_COMPONENT_CLI_DESCRIPTION
      "named PostgreSQL advisory locks from the command line
The pglock tool takes, holds and inspects named PostgreSQL advisory locks: the verbs key,
try, hold, status, bench, demo and fence, for terminals and scripts, and exporter, which
serves the locks by name to Prometheus (alert rules and a Grafana dashboard included).")
endif()

if(PGLOCK_BUILD_GUI)
  list(APPEND CPACK_COMPONENTS_ALL app)
  set(CPACK_DEBIAN_APP_PACKAGE_NAME lockscope)
  set(CPACK_DEBIAN_APP_PACKAGE_SECTION database)
  # Qt loads its SQLite driver (the name catalog, the history) as a plugin, which dpkg-shlibdeps
  # cannot see.
  set(CPACK_DEBIAN_APP_PACKAGE_DEPENDS "libqt6sql6-sqlite")
  set(CPACK_COMPONENT_APP_DESCRIPTION
      "desktop viewer of named PostgreSQL advisory locks
lockscope shows which named advisory locks a PostgreSQL server has, who holds them and who
waits on whom, and resolves lock names to keys and back. During an incident it takes and
releases locks by hand and cancels or terminates sessions; it charts hold durations, keeps a
history of holds and waits and scrapes applications' lock metrics.")
endif()

include(CPack)
