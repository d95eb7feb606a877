#include "config/file_digest.hpp"

#include <mbedtls/sha256.h>
#include <mbedtls/version.h>
#include <unistd.h>

#include <cerrno>

namespace nxdns::config::detail {

namespace {

// 2.28 names the returning variants *_ret (the plain names are its
// deprecated void ones); 3.x has only the plain names, returning int.
#if MBEDTLS_VERSION_MAJOR >= 3
int starts(mbedtls_sha256_context* c) { return mbedtls_sha256_starts(c, 0); }
int update(mbedtls_sha256_context* c, const unsigned char* p, std::size_t n) { return mbedtls_sha256_update(c, p, n); }
int finish(mbedtls_sha256_context* c, unsigned char* out) { return mbedtls_sha256_finish(c, out); }
#else
int starts(mbedtls_sha256_context* c) { return mbedtls_sha256_starts_ret(c, 0); }
int update(mbedtls_sha256_context* c, const unsigned char* p, std::size_t n) {
  return mbedtls_sha256_update_ret(c, p, n);
}
int finish(mbedtls_sha256_context* c, unsigned char* out) { return mbedtls_sha256_finish_ret(c, out); }
#endif

struct Sha256Context {
  mbedtls_sha256_context ctx;
  Sha256Context() { mbedtls_sha256_init(&ctx); }
  ~Sha256Context() { mbedtls_sha256_free(&ctx); }
  Sha256Context(const Sha256Context&) = delete;
  Sha256Context& operator=(const Sha256Context&) = delete;
};

}  // namespace

std::optional<Sha256> sha256_of_fd(int fd, int* err) {
  Sha256Context h;
  // The software SHA-256 cannot fail; its int returns are for hardware
  // back ends, which a failure here would come from.
  if (starts(&h.ctx) != 0) {
    *err = EIO;
    return std::nullopt;
  }
  unsigned char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return std::nullopt;
    }
    if (update(&h.ctx, buf, static_cast<std::size_t>(n)) != 0) {
      *err = EIO;
      return std::nullopt;
    }
  }
  Sha256 out{};
  if (finish(&h.ctx, out.data()) != 0) {
    *err = EIO;
    return std::nullopt;
  }
  return out;
}

}  // namespace nxdns::config::detail
