# Cross toolchain: Debian 12 amd64 host -> aarch64-linux-gnu (Raspberry Pi
# 3/4/5 running a 64-bit OS). Used by `cmake --preset aarch64`; the packages
# come from `scripts/install-deps.sh --cross`, the -dev overlay from
# scripts/aarch64.sh. Libraries are Debian's own :arm64 builds (multiarch),
# not a copied sysroot, so the binaries link against exactly what a Pi with
# Debian 12 runs.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
# Explicit rather than detected: every find_* below relies on it to pick
# lib/aarch64-linux-gnu and never lib/x86_64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Overlay holding the arm64 -dev files that Debian cannot co-install with
# the amd64 ones (libevent-dev, libyaml-cpp-dev) or that the native build's
# package list already names (see cross_packages in scripts/install-deps.sh).
# Searched before the system so its .so links and CMake packages win.
if(NOT NXDNS_ARM64_DEV)
  if(DEFINED ENV{NXDNS_ARM64_DEV})
    set(NXDNS_ARM64_DEV "$ENV{NXDNS_ARM64_DEV}")
  else()
    set(NXDNS_ARM64_DEV /var/cache/nxdns/arm64-dev)
  endif()
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NXDNS_ARM64_DEV)

# "/" stays a root because the multiarch :arm64 packages live in the host's
# /usr/lib/aarch64-linux-gnu; with CMAKE_LIBRARY_ARCHITECTURE fixed above, a
# library search never descends into the host's x86_64 directory.
set(CMAKE_FIND_ROOT_PATH ${NXDNS_ARM64_DEV} /)
# Programs (bash, dig, kdig) are the host's; everything linked is the target's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must see only arm64 .pc files: PKG_CONFIG_LIBDIR replaces the
# built-in (amd64) search path, PKG_CONFIG_PATH would only prepend to it.
set(ENV{PKG_CONFIG_LIBDIR}
    "${NXDNS_ARM64_DEV}/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# binfmt_misc is not mounted on CI machines, so aarch64 executables cannot
# be exec'd directly: ctest (and add_test COMMANDs naming a target) prefix
# them with this. No `-L /usr/aarch64-linux-gnu`: libc6:arm64 provides
# /lib/ld-linux-aarch64.so.1 and the loader finds the :arm64 libraries
# through ld.so.conf.d; pointing -L at the -cross sysroot instead mixes two
# glibc builds and hangs at the first pthread_create.
find_program(NXDNS_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${NXDNS_QEMU_AARCH64})
