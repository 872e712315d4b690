# Read by cpack before each generator runs (CPACK_PROJECT_CONFIG_FILE, cmake/Packaging.cmake).
# Without dpkg-shlibdeps CPack would build .deb packages whose binaries declare no dependencies,
# silently; fail instead.
if(CPACK_GENERATOR STREQUAL "DEB")
  cmake_policy(PUSH)
  cmake_policy(SET CMP0109 NEW)  # a file that is there but not executable is not the tool
  find_program(PGLOCK_DPKG_SHLIBDEPS dpkg-shlibdeps)
  cmake_policy(POP)
  if(NOT PGLOCK_DPKG_SHLIBDEPS)
    message(FATAL_ERROR "dpkg-shlibdeps is missing (Debian package dpkg-dev): the .deb packages would "
                        "have no dependencies. Install dpkg-dev, then run cpack again.")
  endif()
endif()
