# Finds mbedTLS 2.28 (Debian 12: no pkg-config, no CMake package) or 3.x
# (ships both). MBEDTLS_ROOT may point at a private prefix such as the one
# scripts/build-mbedtls3.sh produces; it is searched first and exclusively
# when set, so a 3.6 build never mixes with the system's 2.28 headers.
set(_hints)
set(_opts)
# find_path/find_library results are cached, so re-configuring an existing
# build dir with a different MBEDTLS_ROOT would otherwise silently keep the
# previously found (e.g. system 2.28) paths. Forget them when the root changes.
if(NOT "${MBEDTLS_ROOT}" STREQUAL "${_NXDNS_MBEDTLS_ROOT_USED}")
  unset(MBEDTLS_INCLUDE_DIR CACHE)
  unset(MBEDTLS_LIBRARY CACHE)
  unset(MBEDX509_LIBRARY CACHE)
  unset(MBEDCRYPTO_LIBRARY CACHE)
  set(_NXDNS_MBEDTLS_ROOT_USED "${MBEDTLS_ROOT}" CACHE INTERNAL "MBEDTLS_ROOT the cached MbedTLS paths belong to")
endif()
if(MBEDTLS_ROOT)
  set(_hints HINTS ${MBEDTLS_ROOT})
  set(_opts NO_DEFAULT_PATH)
endif()
find_path(MBEDTLS_INCLUDE_DIR mbedtls/ssl.h ${_hints} PATH_SUFFIXES include ${_opts})
find_library(MBEDTLS_LIBRARY mbedtls ${_hints} PATH_SUFFIXES lib lib64 ${_opts})
find_library(MBEDX509_LIBRARY mbedx509 ${_hints} PATH_SUFFIXES lib lib64 ${_opts})
find_library(MBEDCRYPTO_LIBRARY mbedcrypto ${_hints} PATH_SUFFIXES lib lib64 ${_opts})

if(MBEDTLS_INCLUDE_DIR)
  foreach(_hdr build_info.h version.h)
    if(EXISTS "${MBEDTLS_INCLUDE_DIR}/mbedtls/${_hdr}")
      file(STRINGS "${MBEDTLS_INCLUDE_DIR}/mbedtls/${_hdr}" _ver REGEX "#define MBEDTLS_VERSION_STRING +\"")
      if(_ver)
        string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" MbedTLS_VERSION "${_ver}")
        break()
      endif()
    endif()
  endforeach()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MbedTLS
  REQUIRED_VARS MBEDTLS_LIBRARY MBEDX509_LIBRARY MBEDCRYPTO_LIBRARY MBEDTLS_INCLUDE_DIR
  VERSION_VAR MbedTLS_VERSION)

if(MbedTLS_FOUND AND NOT TARGET MbedTLS::mbedtls)
  add_library(MbedTLS::mbedcrypto UNKNOWN IMPORTED)
  set_target_properties(MbedTLS::mbedcrypto PROPERTIES
    IMPORTED_LOCATION "${MBEDCRYPTO_LIBRARY}" INTERFACE_INCLUDE_DIRECTORIES "${MBEDTLS_INCLUDE_DIR}")
  add_library(MbedTLS::mbedx509 UNKNOWN IMPORTED)
  set_target_properties(MbedTLS::mbedx509 PROPERTIES
    IMPORTED_LOCATION "${MBEDX509_LIBRARY}" INTERFACE_LINK_LIBRARIES MbedTLS::mbedcrypto)
  add_library(MbedTLS::mbedtls UNKNOWN IMPORTED)
  set_target_properties(MbedTLS::mbedtls PROPERTIES
    IMPORTED_LOCATION "${MBEDTLS_LIBRARY}" INTERFACE_LINK_LIBRARIES MbedTLS::mbedx509)
  if(MBEDTLS_ROOT)
    # A private prefix is not on the loader path; record it in the binaries.
    # (Find modules run in the caller's scope, so this reaches the project.)
    get_filename_component(_libdir "${MBEDTLS_LIBRARY}" DIRECTORY)
    list(APPEND CMAKE_BUILD_RPATH "${_libdir}")
  endif()
endif()
mark_as_advanced(MBEDTLS_INCLUDE_DIR MBEDTLS_LIBRARY MBEDX509_LIBRARY MBEDCRYPTO_LIBRARY)
